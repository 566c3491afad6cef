// Template definitions for ir/kernel.h.
#pragma once

namespace tilert {

template <typename Fn>
void visit_stmts(const Block& block, Fn&& fn) {
  for (const Stmt& s : block) {
    fn(s);
    if (auto* p = s.as<ParallelOp>()) visit_stmts(p->body, fn);
    if (auto* f = s.as<ForOp>()) visit_stmts(f->body, fn);
    if (auto* i = s.as<IfOp>()) {
      visit_stmts(i->then_body, fn);
      visit_stmts(i->else_body, fn);
    }
    if (auto* r = s.as<RoleOp>()) visit_stmts(r->body, fn);
  }
}

}  // namespace tilert
