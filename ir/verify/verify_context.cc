#include "ir/verify/verify_context.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"

namespace tilert {

VerifyContext::VerifyContext(const Kernel& kernel, const VerifyOptions& options,
                             std::vector<Diagnostic>* out)
    : kernel_(kernel), options_(options), out_(out) {
  int64_t next = 0;
  visit_stmts(kernel.body, [&](const Stmt& s) { op_index_[&s] = next++; });
}

void VerifyContext::report(std::string_view rule, const Stmt& stmt, std::string message) {
  Diagnostic d;
  d.rule = std::string(rule);
  d.kernel = kernel_.name;
  d.op = std::string(safe_op_name(stmt));
  d.loc = stmt.loc;
  d.op_index = op_index(stmt);
  d.message = std::move(message);
  out_->push_back(std::move(d));
}

void VerifyContext::report_kernel(std::string_view rule, SourceLoc loc, std::string message) {
  Diagnostic d;
  d.rule = std::string(rule);
  d.kernel = kernel_.name;
  d.loc = loc;
  d.message = std::move(message);
  out_->push_back(std::move(d));
}

std::string VerifyContext::symbol_name(SymbolId id) const {
  if (has_symbol(id)) return kernel_.symbols[id].name;
  return absl::StrCat("symbol #", id);
}

int64_t VerifyContext::op_index(const Stmt& stmt) const {
  auto it = op_index_.find(&stmt);
  return it == op_index_.end() ? -1 : it->second;
}

std::string VerifyContext::describe(const Stmt& stmt) const {
  std::string name(safe_op_name(stmt));
  if (stmt.loc.line != 0) return absl::StrCat(name, " at line ", stmt.loc.line);
  return absl::StrCat(name, ", op #", op_index(stmt));
}

std::string_view safe_op_name(const Stmt& stmt) {
  if (auto* r = stmt.as<ReduceOp>(); r && static_cast<int>(r->kind) > 2) return "reduce";
  if (auto* f = stmt.as<ForOp>(); f && static_cast<int>(f->kind) > 2) return "for";
  return stmt_op_name(stmt);
}

std::string format_shape(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::string_view symbol_kind_phrase(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kScalarParam: return "scalar parameter";
    case SymbolKind::kTensorParam: return "tensor parameter";
    case SymbolKind::kShared: return "shared tile";
    case SymbolKind::kFragment: return "fragment tile";
    case SymbolKind::kLocal: return "local";
    case SymbolKind::kLoopVar: return "loop variable";
    case SymbolKind::kMbarrier: return "mbarrier";
  }
  return "symbol of unknown kind";
}

namespace {

void region_exprs(const Region& r, const std::function<void(const Expr&)>& fn) {
  for (const Range& range : r.ranges) fn(range.start);
}

}  // namespace

void for_each_stmt_expr(const Stmt& stmt, const std::function<void(const Expr&)>& fn) {
  for_each_region(stmt, [&](const Region& r) { region_exprs(r, fn); });
  if (const MbarrierRef* ref = stmt_mbarrier(stmt)) fn(ref->index);
  if (auto* f = stmt.as<FillOp>()) fn(f->value);
  if (auto* p = stmt.as<ParallelOp>()) {
    for (const Expr& e : p->begins) fn(e);
    for (const Expr& e : p->ends) fn(e);
  }
  if (auto* f = stmt.as<ForOp>()) {
    fn(f->begin);
    fn(f->end);
  }
  if (auto* i = stmt.as<IfOp>()) fn(i->condition);
  if (auto* a = stmt.as<AssignOp>()) {
    for (const Expr& e : a->indices) fn(e);
    fn(a->value);
  }
  if (auto* a = stmt.as<AtomicAddOp>()) {
    for (const Expr& e : a->indices) fn(e);
    fn(a->value);
  }
  if (auto* n = stmt.as<NamedBarrierOp>()) {
    fn(n->id);
    fn(n->thread_count);
  }
  if (auto* x = stmt.as<MbarrierExpectTxOp>()) fn(x->bytes);
  if (auto* w = stmt.as<MbarrierWaitOp>()) fn(w->parity);
}

void for_each_region(const Stmt& stmt, const std::function<void(const Region&)>& fn) {
  if (auto* c = stmt.as<CopyOp>()) {
    fn(c->src);
    fn(c->dst);
  } else if (auto* a = stmt.as<CopyAsyncOp>()) {
    fn(a->src);
    fn(a->dst);
  } else if (auto* g = stmt.as<GemmOp>()) {
    fn(g->a);
    fn(g->b);
    fn(g->c);
  } else if (auto* f = stmt.as<FillOp>()) {
    fn(f->dst);
  } else if (auto* r = stmt.as<ReduceOp>()) {
    fn(r->src);
    fn(r->dst);
  }
}

const MbarrierRef* stmt_mbarrier(const Stmt& stmt) {
  if (auto* a = stmt.as<CopyAsyncOp>()) return &a->barrier;
  if (auto* a = stmt.as<MbarrierArriveOp>()) return &a->barrier;
  if (auto* x = stmt.as<MbarrierExpectTxOp>()) return &x->barrier;
  if (auto* w = stmt.as<MbarrierWaitOp>()) return &w->barrier;
  return nullptr;
}

std::vector<const Block*> child_blocks(const Stmt& stmt) {
  if (auto* p = stmt.as<ParallelOp>()) return {&p->body};
  if (auto* f = stmt.as<ForOp>()) return {&f->body};
  if (auto* i = stmt.as<IfOp>()) return {&i->then_body, &i->else_body};
  if (auto* r = stmt.as<RoleOp>()) return {&r->body};
  return {};
}

}  // namespace tilert
