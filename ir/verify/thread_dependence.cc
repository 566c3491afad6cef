#include "ir/verify/thread_dependence.h"

#include "ir/verify/verify_context.h"

namespace tilert {

ThreadDependence::ThreadDependence(const Kernel& kernel)
    : kernel_(kernel), per_thread_(kernel.symbols.size(), false) {
  // Each round marks at least one more symbol or stops, so this ends within |symbols| rounds.
  while (propagate(kernel.body, false)) {
  }
}

bool ThreadDependence::depends_on_thread(const Expr& e) const {
  bool depends = false;
  visit_expr(e, [&](const Expr& node) {
    if (node.kind == ExprKind::kBuiltin && static_cast<Builtin>(node.op) == Builtin::kThreadX)
      depends = true;
    if ((node.kind == ExprKind::kSymbol || node.kind == ExprKind::kLoad) &&
        node.symbol < per_thread_.size() && per_thread_[node.symbol])
      depends = true;
    // Which thread holds a fragment element is the lowerer's choice.
    if (node.kind == ExprKind::kLoad && node.symbol < kernel_.symbols.size() &&
        kernel_.symbols[node.symbol].kind == SymbolKind::kFragment)
      depends = true;
  });
  return depends;
}

bool ThreadDependence::makes_divergent(const Stmt& s) const {
  if (auto* i = s.as<IfOp>()) return depends_on_thread(i->condition);
  if (auto* f = s.as<ForOp>()) return depends_on_thread(f->begin) || depends_on_thread(f->end);
  if (auto* p = s.as<ParallelOp>()) {
    for (size_t i = 0; i < p->begins.size() && i < p->ends.size(); ++i)
      if (depends_on_thread(p->begins[i]) || depends_on_thread(p->ends[i])) return true;
  }
  return false;
}

bool ThreadDependence::mark(SymbolId id) {
  if (id >= per_thread_.size() || per_thread_[id]) return false;
  per_thread_[id] = true;
  return true;
}

// One pass over `block`; returns whether anything new was marked.
bool ThreadDependence::propagate(const Block& block, bool divergent) {
  bool changed = false;
  for (const Stmt& s : block) {
    if (auto* a = s.as<AssignOp>(); a && a->target < kernel_.symbols.size() &&
                                    kernel_.symbols[a->target].kind == SymbolKind::kLocal) {
      bool depends = divergent || depends_on_thread(a->value);
      for (const Expr& i : a->indices) depends = depends || depends_on_thread(i);
      if (depends) changed |= mark(a->target);
    }
    bool inner_divergent = divergent || makes_divergent(s);
    if (auto* f = s.as<ForOp>(); f && makes_divergent(s)) changed |= mark(f->var);
    // Parallel iterations are spread over threads: their variables differ between threads.
    if (auto* p = s.as<ParallelOp>()) {
      for (SymbolId v : p->vars) changed |= mark(v);
      inner_divergent = true;
    }
    for (const Block* b : child_blocks(s)) changed |= propagate(*b, inner_divergent);
  }
  return changed;
}

}  // namespace tilert
