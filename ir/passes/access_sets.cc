#include "ir/passes/access_sets.h"

#include <algorithm>

namespace tilert {
namespace {

bool tracked(const Kernel& kernel, SymbolId id) {
  if (id >= kernel.symbols.size()) return false;
  SymbolKind kind = kernel.symbol(id).kind;
  // A barrier also orders a block's global memory accesses, so tensors count as well as shared
  // tiles: a block that writes a tensor and reads it back needs the barrier too.
  return kind == SymbolKind::kShared || kind == SymbolKind::kTensorParam;
}

class AccessCollector {
 public:
  AccessCollector(const Kernel& kernel, const Stmt& stmt) : kernel_(kernel), stmt_(stmt) {}

  void region(const Region& r, bool write) {
    for (const Range& range : r.ranges) loads(range.start);
    if (!tracked(kernel_, r.buffer)) return;
    Access a{r.buffer, write, false, {}, stmt_op_name(stmt_), stmt_.loc};
    for (const Range& range : r.ranges) a.dims.push_back({const_int_value(range.start), range.extent});
    out_.push_back(std::move(a));
  }

  void element(SymbolId buffer, const std::vector<Expr>& indices, bool write, bool atomic) {
    for (const Expr& i : indices) loads(i);
    if (!tracked(kernel_, buffer)) return;
    Access a{buffer, write, atomic, {}, stmt_op_name(stmt_), stmt_.loc};
    for (const Expr& i : indices) a.dims.push_back({const_int_value(i), 1});
    out_.push_back(std::move(a));
  }

  void loads(const Expr& e) {
    visit_expr(e, [&](const Expr& node) {
      if (node.kind != ExprKind::kLoad || !tracked(kernel_, node.symbol)) return;
      Access a{node.symbol, false, false, {}, stmt_op_name(stmt_), stmt_.loc};
      for (const Expr& i : node.args) a.dims.push_back({const_int_value(i), 1});
      out_.push_back(std::move(a));
    });
  }

  // Thread-level statements of a parallel body (assignments, ifs, declarations).
  void parallel_body(const Block& body) {
    for (const Stmt& s : body) {
      if (auto* as = s.as<AssignOp>()) {
        loads(as->value);
        element(as->target, as->indices, true, false);
      } else if (auto* i = s.as<IfOp>()) {
        loads(i->condition);
        parallel_body(i->then_body);
        parallel_body(i->else_body);
      }
    }
  }

  std::vector<Access> take() { return std::move(out_); }

 private:
  const Kernel& kernel_;
  const Stmt& stmt_;
  std::vector<Access> out_;
};

bool dims_disjoint(const AccessDim& a, const AccessDim& b) {
  if (!a.start || !b.start || a.extent <= 0 || b.extent <= 0) return false;
  return *a.start + a.extent <= *b.start || *b.start + b.extent <= *a.start;
}

}  // namespace

bool Access::operator==(const Access& o) const {
  if (buffer != o.buffer || write != o.write || atomic != o.atomic || op != o.op || !(loc == o.loc) ||
      dims.size() != o.dims.size())
    return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].start != o.dims[i].start || dims[i].extent != o.dims[i].extent) return false;
  return true;
}

bool accesses_conflict(const Access& a, const Access& b) {
  if (a.buffer != b.buffer) return false;
  if (!a.write && !b.write) return false;
  if (a.atomic && b.atomic) return false;
  size_t n = std::min(a.dims.size(), b.dims.size());
  for (size_t i = 0; i < n; ++i)
    if (dims_disjoint(a.dims[i], b.dims[i])) return false;
  return true;
}

std::vector<Access> statement_accesses(const Kernel& kernel, const Stmt& stmt) {
  AccessCollector c(kernel, stmt);
  if (auto* op = stmt.as<CopyOp>()) {
    c.region(op->src, false);
    c.region(op->dst, true);
  } else if (auto* op = stmt.as<CopyAsyncOp>()) {
    c.region(op->src, false);
    c.region(op->dst, true);
  } else if (auto* op = stmt.as<GemmOp>()) {
    c.region(op->a, false);
    c.region(op->b, false);
    c.region(op->c, false);  // c accumulates: read and written (a fragment: not tracked)
    c.region(op->c, true);
  } else if (auto* op = stmt.as<FillOp>()) {
    c.loads(op->value);
    c.region(op->dst, true);
  } else if (auto* op = stmt.as<ReduceOp>()) {
    c.region(op->src, false);
    if (op->accumulate) c.region(op->dst, false);
    c.region(op->dst, true);
  } else if (auto* op = stmt.as<ParallelOp>()) {
    for (const Expr& e : op->begins) c.loads(e);
    for (const Expr& e : op->ends) c.loads(e);
    c.parallel_body(op->body);
  } else if (auto* op = stmt.as<ForOp>()) {
    c.loads(op->begin);
    c.loads(op->end);
  } else if (auto* op = stmt.as<IfOp>()) {
    c.loads(op->condition);
  } else if (auto* op = stmt.as<AssignOp>()) {
    c.loads(op->value);
    c.element(op->target, op->indices, true, false);
  } else if (auto* op = stmt.as<AtomicAddOp>()) {
    c.loads(op->value);
    c.element(op->target, op->indices, true, true);
  }
  return c.take();
}

std::string_view access_verb(const Access& a) {
  if (a.atomic) return "atomically updates";
  return a.write ? "writes" : "reads";
}

}  // namespace tilert
