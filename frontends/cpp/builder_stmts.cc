// The builder's statements: tile ops, loops, branches, roles, thread-level code and sync. Each
// appends exactly the op the same .tile statement parses to.
#include "absl/strings/str_cat.h"
#include "frontends/cpp/builder.h"
#include "ir/status.h"

namespace tilert::tl {

void KernelBuilder::append(StmtOp op) {
  Stmt stmt;
  stmt.op = std::move(op);
  open_blocks_.back().push_back(std::move(stmt));
}

Block KernelBuilder::nested_block(const std::function<void()>& fill) {
  open_blocks_.emplace_back();
  push_scope();
  if (fill) fill();
  pop_scope();
  Block block = std::move(open_blocks_.back());
  open_blocks_.pop_back();
  return block;
}

// ---- Tile ops ----

void KernelBuilder::copy(const RegionRef& src, const RegionRef& dst) {
  finish_params();
  std::optional<Region> s = use(src, "copy");
  std::optional<Region> d = s ? use(dst, "copy") : std::nullopt;
  if (d) append(CopyOp{std::move(*s), std::move(*d)});
}

void KernelBuilder::copy_async(const RegionRef& src, const RegionRef& dst, const MbarrierSlot& complete) {
  finish_params();
  std::optional<Region> s = use(src, "copy_async");
  std::optional<Region> d = s ? use(dst, "copy_async") : std::nullopt;
  std::optional<MbarrierRef> b = d ? use(complete, "copy_async") : std::nullopt;
  if (b) append(CopyAsyncOp{std::move(*s), std::move(*d), std::move(*b)});
}

void KernelBuilder::gemm(const RegionRef& a, const RegionRef& b, const RegionRef& c, bool transpose_a,
                         bool transpose_b) {
  finish_params();
  std::optional<Region> ra = use(a, "gemm");
  std::optional<Region> rb = ra ? use(b, "gemm") : std::nullopt;
  std::optional<Region> rc = rb ? use(c, "gemm") : std::nullopt;
  if (rc) append(GemmOp{std::move(*ra), std::move(*rb), std::move(*rc), transpose_a, transpose_b});
}

void KernelBuilder::fill(const RegionRef& dst, const Value& value) {
  finish_params();
  std::optional<Region> d = use(dst, "fill");
  std::optional<Expr> v = d ? use(value, "fill") : std::nullopt;
  if (v) append(FillOp{std::move(*d), std::move(*v)});
}

// `clear r` is `fill r, 0` with an i32 zero, exactly as the parser reads it.
void KernelBuilder::clear(const RegionRef& dst) { fill(dst, Value(0)); }

void KernelBuilder::reduce(ReduceKind kind, const RegionRef& src, const RegionRef& dst, int32_t dim,
                           bool accumulate) {
  finish_params();
  std::string what(reduce_kind_name(kind));
  if (dim < 0) {
    fail(absl::StrCat(what, ": dim(", dim, ") must not be negative"));
    return;
  }
  std::optional<Region> s = use(src, what);
  std::optional<Region> d = s ? use(dst, what) : std::nullopt;
  if (d) append(ReduceOp{kind, std::move(*s), std::move(*d), dim, accumulate});
}
void KernelBuilder::reduce_sum(const RegionRef& src, const RegionRef& dst, int32_t dim, bool accumulate) {
  reduce(ReduceKind::kSum, src, dst, dim, accumulate);
}
void KernelBuilder::reduce_max(const RegionRef& src, const RegionRef& dst, int32_t dim, bool accumulate) {
  reduce(ReduceKind::kMax, src, dst, dim, accumulate);
}
void KernelBuilder::reduce_min(const RegionRef& src, const RegionRef& dst, int32_t dim, bool accumulate) {
  reduce(ReduceKind::kMin, src, dst, dim, accumulate);
}

// ---- Loops, branches, roles ----

void KernelBuilder::parallel_arity_error(size_t body_takes, size_t loop_has) {
  fail(absl::StrCat("parallel: the body takes ", body_takes, " loop variable(s), the loop has ", loop_has));
}

// Bounds are read before the variables are declared (they cannot name them), then the variables
// in order, each in the loop's own scope.
void KernelBuilder::parallel_loop(std::vector<Axis> axes,
                                  const std::function<void(const std::vector<Value>&)>& body) {
  finish_params();
  if (axes.empty()) {
    fail("parallel: needs at least one axis");
    return;
  }
  ParallelOp op;
  for (const Axis& axis : axes) {
    std::optional<Expr> begin = use(axis.begin, "parallel");
    std::optional<Expr> end = begin ? use(axis.end, "parallel") : std::nullopt;
    if (!end) return;
    op.begins.push_back(std::move(*begin));
    op.ends.push_back(std::move(*end));
  }
  push_scope();
  std::vector<Value> vars;
  for (Axis& axis : axes) {
    std::optional<SymbolId> id = declare(std::move(axis.name), SymbolKind::kLoopVar, DType::kI32, "parallel");
    if (!id) {
      pop_scope();
      return;
    }
    op.vars.push_back(*id);
    vars.push_back(Value(Expr::symbol_ref(*id, DType::kI32)));
  }
  op.body = nested_block([&] { body(vars); });
  pop_scope();
  append(std::move(op));
}

void KernelBuilder::for_loop(LoopKind kind, std::string var, const Value& begin, const Value& end,
                             int32_t stages, const std::function<void(Value)>& body) {
  finish_params();
  std::string what(loop_kind_name(kind));
  if (stages < 0 || (stages != 0 && kind != LoopKind::kPipelined)) {
    fail(absl::StrCat(what, ": stages(", stages, ") is only for pipelined loops, and not negative"));
    return;
  }
  ForOp op;
  op.kind = kind;
  op.stages = stages;
  std::optional<Expr> b = use(begin, what);
  std::optional<Expr> e = b ? use(end, what) : std::nullopt;
  if (!e) return;
  op.begin = std::move(*b);
  op.end = std::move(*e);
  push_scope();
  std::optional<SymbolId> id = declare(std::move(var), SymbolKind::kLoopVar, DType::kI32, what);
  if (!id) {
    pop_scope();
    return;
  }
  op.var = *id;
  Value v(Expr::symbol_ref(*id, DType::kI32));
  op.body = nested_block([&] { body(v); });
  pop_scope();
  append(std::move(op));
}

void KernelBuilder::if_then(const Value& condition, const std::function<void()>& then_body) {
  if_then_else(condition, then_body, nullptr);
}

void KernelBuilder::if_then_else(const Value& condition, const std::function<void()>& then_body,
                                 const std::function<void()>& else_body) {
  finish_params();
  std::optional<Expr> c = use(condition, "if");
  if (!c) return;
  IfOp op;
  op.condition = std::move(*c);
  op.then_body = nested_block(then_body);
  if (else_body) op.else_body = nested_block(else_body);
  append(std::move(op));
}

void KernelBuilder::role(std::string name, int32_t threads, int32_t regs,
                         const std::function<void()>& body) {
  finish_params();
  if (threads < 1 || regs < 0) {
    fail(absl::StrCat("role '", name, "': threads (", threads, ") must be positive and regs (", regs,
                      ") not negative"));
    return;
  }
  RoleOp op;
  op.name = std::move(name);
  op.threads = threads;
  op.regs = regs;
  op.body = nested_block(body);
  append(std::move(op));
}

// ---- Thread-level statements ----

std::optional<AssignOp> KernelBuilder::element_target(const Value& target, const Value& value,
                                                      std::string_view what) {
  std::optional<Expr> t = use(target, what);
  if (!t) return std::nullopt;
  if (t->kind != ExprKind::kLoad && t->kind != ExprKind::kSymbol) {
    fail(absl::StrCat(av(what), ": the target must be a buffer element or a scalar local"));
    return std::nullopt;
  }
  SymbolKind kind = kernel_.symbols[t->symbol].kind;
  if (kind == SymbolKind::kScalarParam || kind == SymbolKind::kLoopVar) {
    fail(absl::StrCat(av(what), ": cannot assign to '", kernel_.symbols[t->symbol].name, "' (a ",
                      av(symbol_kind_name(kind)), ")"));
    return std::nullopt;
  }
  std::optional<Expr> v = use(value, what);
  if (!v) return std::nullopt;
  return AssignOp{t->symbol, std::move(t->args), std::move(*v)};
}

void KernelBuilder::assign(const Value& target, const Value& value) {
  finish_params();
  std::optional<AssignOp> op = element_target(target, value, "assign");
  if (op) append(std::move(*op));
}

void KernelBuilder::atomic_add(const Value& target, const Value& value) {
  finish_params();
  std::optional<AssignOp> op = element_target(target, value, "atomic_add");
  if (op) append(AtomicAddOp{op->target, std::move(op->indices), std::move(op->value)});
}

// ---- Synchronization ----

void KernelBuilder::barrier_sync() {
  finish_params();
  append(BarrierOp{});
}
void KernelBuilder::subgroup_barrier() {
  finish_params();
  append(SubgroupBarrierOp{});
}

void KernelBuilder::named(bool wait, const Value& id, const Value& thread_count) {
  finish_params();
  std::string_view what = wait ? "named_barrier" : "named_arrive";
  std::optional<Expr> i = use(id, what);
  std::optional<Expr> n = i ? use(thread_count, what) : std::nullopt;
  if (n) append(NamedBarrierOp{std::move(*i), std::move(*n), wait});
}
void KernelBuilder::named_barrier(const Value& id, const Value& thread_count) {
  named(true, id, thread_count);
}
void KernelBuilder::named_arrive(const Value& id, const Value& thread_count) {
  named(false, id, thread_count);
}

void KernelBuilder::arrive(const MbarrierSlot& barrier) {
  finish_params();
  std::optional<MbarrierRef> b = use(barrier, "arrive");
  if (b) append(MbarrierArriveOp{std::move(*b)});
}
void KernelBuilder::arrive_expect_tx(const MbarrierSlot& barrier, const Value& bytes) {
  finish_params();
  std::optional<MbarrierRef> b = use(barrier, "arrive_expect_tx");
  std::optional<Expr> n = b ? use(bytes, "arrive_expect_tx") : std::nullopt;
  if (n) append(MbarrierExpectTxOp{std::move(*b), std::move(*n)});
}
void KernelBuilder::wait(const MbarrierSlot& barrier, const Value& parity) {
  finish_params();
  std::optional<MbarrierRef> b = use(barrier, "wait");
  std::optional<Expr> p = b ? use(parity, "wait") : std::nullopt;
  if (p) append(MbarrierWaitOp{std::move(*b), std::move(*p)});
}
void KernelBuilder::fence(FenceScope scope) {
  finish_params();
  append(FenceOp{scope});
}
void KernelBuilder::cluster_sync() {
  finish_params();
  append(ClusterSyncOp{});
}

}  // namespace tilert::tl
