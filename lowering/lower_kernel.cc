// The lowering driver: storage for every symbol, statement dispatch, thread-level statements, and
// the barrier tracker that places workgroup barriers between ops whose shared or global accesses
// conflict (what the tile IR leaves implicit: see ir/passes/insert_barriers.h for the same rule at
// the tile level).
#include "lowering/lower_kernel.h"

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"
#include "lowering/simt_unroll.h"

namespace tilert::lowering {

using simt::Space;

namespace {

std::vector<int64_t> constant_shape(const Symbol& s) {
  std::vector<int64_t> shape;
  for (const Expr& e : s.shape) shape.push_back(const_int_value(e).value_or(0));
  return shape;
}

bool needs_schedule(const Kernel& k) {
  bool found = false;
  visit_stmts(k.body, [&](const Stmt& s) {
    if (s.as<RoleOp>() != nullptr || s.as<MbarrierWaitOp>() != nullptr) found = true;
    if (const auto* n = s.as<NamedBarrierOp>(); n != nullptr && n->wait) found = true;
  });
  return found;
}

// The scratch the lowering may use for reductions and staged gemm operands, at most.
constexpr int64_t kMaxScratchBytes = 16384;

}  // namespace

// ---- barrier tracker ----

bool BarrierTracker::needs_barrier(const std::vector<Access>& accesses) const {
  for (const Access& p : pending_)
    for (const Access& a : accesses)
      if (accesses_conflict(p, a)) return true;
  return false;
}

void BarrierTracker::record(const std::vector<Access>& accesses) {
  pending_.insert(pending_.end(), accesses.begin(), accesses.end());
}

void Lowerer::order_accesses(const std::vector<Access>& accesses) {
  if (tracker_.needs_barrier(accesses)) barrier_now();
}

void Lowerer::add_proxy_fences(simt::Body& body) {
  for (size_t i = 0; i < body.size(); ++i) {
    add_proxy_fences(body[i].body);
    add_proxy_fences(body[i].else_body);
    if (body[i].kind == simt::StmtKind::kBarrier && body[i].barrier == simt::BarrierKind::kWorkgroup) {
      simt::Stmt fence;
      fence.kind = simt::StmtKind::kProxyFence;
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(i), std::move(fence));
      ++i;
    }
  }
}

void Lowerer::barrier_now() {
  simt::Stmt s;
  s.kind = simt::StmtKind::kBarrier;
  s.barrier = simt::BarrierKind::kWorkgroup;
  emit(std::move(s));
  tracker_.clear();
}

namespace {

// Shared-backed fragments are shared memory too: their accesses order like shared tiles'.
class FragmentAccesses {
 public:
  FragmentAccesses(const Kernel& k, const std::vector<Storage>& storage, std::vector<Access>& out)
      : k_(k), storage_(storage), out_(out) {}

  void stmt(const Stmt& s) {
    if (const auto* c = s.as<CopyOp>()) { region(c->src, false, s); region(c->dst, true, s); }
    else if (const auto* c = s.as<CopyAsyncOp>()) { region(c->src, false, s); region(c->dst, true, s); }
    else if (const auto* f = s.as<FillOp>()) region(f->dst, true, s);
    else if (const auto* g = s.as<GemmOp>()) { region(g->a, false, s); region(g->b, false, s); region(g->c, true, s); }
    else if (const auto* r = s.as<ReduceOp>()) { region(r->src, false, s); region(r->dst, true, s); }
    else if (const auto* p = s.as<ParallelOp>()) { for (const Stmt& b : p->body) stmt(b); }
    else if (const auto* a = s.as<AssignOp>()) {
      add(a->target, true, s);
      expr(a->value, s);
      for (const Expr& i : a->indices) expr(i, s);
    } else if (const auto* i = s.as<IfOp>()) {
      expr(i->condition, s);
      for (const Stmt& b : i->then_body) stmt(b);
      for (const Stmt& b : i->else_body) stmt(b);
    } else if (const auto* f = s.as<ForOp>()) {
      for (const Stmt& b : f->body) stmt(b);
    } else if (const auto* a = s.as<AtomicAddOp>()) {
      expr(a->value, s);
    } else if (const auto* f = s.as<FillOp>()) {
      expr(f->value, s);
    }
  }

 private:
  void region(const Region& r, bool write, const Stmt& s) {
    add(r.buffer, write, s);
    if (write) add(r.buffer, false, s);
    for (const Range& rg : r.ranges) expr(rg.start, s);
  }
  void expr(const Expr& e, const Stmt& s) {
    if (e.kind == ExprKind::kLoad) add(e.symbol, false, s);
    for (const Expr& a : e.args) expr(a, s);
  }
  void add(SymbolId id, bool write, const Stmt& s) {
    if (id >= k_.symbols.size() || k_.symbols[id].kind != SymbolKind::kFragment) return;
    if (storage_[id].kind != Storage::Kind::kShared) return;
    Access a;
    a.buffer = id;
    a.write = write;
    a.op = stmt_op_name(s);
    a.loc = s.loc;
    out_.push_back(std::move(a));
  }

  const Kernel& k_;
  const std::vector<Storage>& storage_;
  std::vector<Access>& out_;
};

void collect_accesses(const Kernel& k, const std::vector<Storage>& storage, const Stmt& s,
                      std::vector<Access>& out) {
  std::vector<Access> own = statement_accesses(k, s);
  out.insert(out.end(), own.begin(), own.end());
  if (s.as<ParallelOp>() == nullptr) {
    // Nested blocks of thread-level compound statements (collective ones recurse elsewhere).
    auto nested = [&](const Block& b) { for (const Stmt& x : b) collect_accesses(k, storage, x, out); };
    if (const auto* i = s.as<IfOp>()) { nested(i->then_body); nested(i->else_body); }
    if (const auto* f = s.as<ForOp>()) nested(f->body);
  }
  FragmentAccesses(k, storage, out).stmt(s);
}

}  // namespace

std::vector<Access> Lowerer::accesses_of(const Stmt& s) const {
  std::vector<Access> out;
  collect_accesses(kernel_, storage_, s, out);
  return out;
}

absl::Status Lowerer::unsupported(const Stmt& s, std::string_view what) const { return unsupported(s.loc, what); }

absl::Status Lowerer::unsupported(SourceLoc loc, std::string_view what) const {
  return absl::UnimplementedError(absl::StrCat("kernel ", kernel_.name,
                                               loc.line ? absl::StrCat(", line ", loc.line) : std::string(),
                                               ": ", av(what), " cannot be lowered for ", target_.name()));
}

// ---- setup ----

Lowerer::Lowerer(const Kernel& kernel, const TargetDescription& target, const LowerOptions& options)
    : kernel_(kernel), target_(target), options_(options), thread_dep_(kernel) {}

absl::StatusOr<simt::Function> Lowerer::run() {
  fn_.name = kernel_.name;
  fn_.threads = kernel_.threads;
  for (size_t d = 0; d < kernel_.cluster.size() && d < 3; ++d) fn_.cluster[d] = kernel_.cluster[d];
  if (fn_.has_cluster() && !target_.has(TargetFeature::kClusters))
    return absl::UnimplementedError(absl::StrCat("kernel ", kernel_.name, ": cluster(...) needs thread-block clusters, which ",
                                                 target_.name(), " does not have"));
  out_ = &fn_.body;
  storage_.resize(kernel_.symbols.size());
  layouts_ = infer_fragment_layouts(kernel_, target_, options_.warpgroup_mma);

  // Parameters, in signature order, then the status record.
  std::vector<bool> written(kernel_.symbols.size(), false);
  visit_stmts(kernel_.body, [&](const Stmt& s) {
    if (const auto* c = s.as<CopyOp>()) written[c->dst.buffer] = true;
    if (const auto* c = s.as<CopyAsyncOp>()) written[c->dst.buffer] = true;
    if (const auto* a = s.as<AssignOp>()) written[a->target] = true;
    if (const auto* a = s.as<AtomicAddOp>()) written[a->target] = true;
    if (const auto* p = s.as<ParallelOp>())
      visit_stmts(p->body, [&](const Stmt& b) {
        if (const auto* a = b.as<AssignOp>()) written[a->target] = true;
      });
  });
  for (SymbolId id = 0; id < kernel_.num_params; ++id) {
    const Symbol& sym = kernel_.symbols[id];
    simt::Param p;
    p.name = sym.name;
    p.type = sym.dtype;
    p.is_array = sym.kind == SymbolKind::kTensorParam;
    p.written = p.is_array && written[id];
    storage_[id].kind = p.is_array ? Storage::Kind::kTensor : Storage::Kind::kScalarParam;
    storage_[id].id = static_cast<uint32_t>(fn_.params.size());
    fn_.params.push_back(std::move(p));
  }
  // Tensor storage ids index the kernel's symbols (their shapes are read from there).
  for (SymbolId id = 0; id < kernel_.num_params; ++id)
    if (storage_[id].kind == Storage::Kind::kTensor) storage_[id].id = id;
  fn_.status_param = static_cast<int32_t>(fn_.params.size());
  fn_.params.push_back({"status", true, DType::kU32, true});
  if (options_.sync_profile) profile_.emplace(fn_, kernel_.threads, target_.min_subgroup_size());

  // Tiles, locals and barriers: storage for the whole function.
  if (!needs_schedule(kernel_)) plan_workgroup_gemms();
  for (SymbolId id = kernel_.num_params; id < kernel_.symbols.size(); ++id) {
    const Symbol& sym = kernel_.symbols[id];
    Storage& st = storage_[id];
    st.shape = constant_shape(sym);
    if (elided_by_workgroup_gemm(id)) continue;  // nothing reads the tile: no storage
    if (is_workgroup_accumulator(id)) {
      declare_workgroup_accumulator(sym, st);
      continue;
    }
    switch (sym.kind) {
      case SymbolKind::kShared:
        st.kind = Storage::Kind::kShared;
        st.swizzled = layouts_.swizzled_tiles.contains(id);
        async_proxy_reads_ |= st.swizzled;
        if (st.swizzled) st.swizzle = wgmma_swizzle_bytes(st.shape.back() * dtype_size(sym.dtype));
        if (layouts_.padded_operand_tiles.contains(id)) st.pitch = padded_row_pitch(st.shape, dtype_size(sym.dtype));
        break;
      case SymbolKind::kFragment:
        switch (layouts_.of(id)) {
          case FragmentLayout::kDistributed: st.kind = Storage::Kind::kDistributed; break;
          case FragmentLayout::kShared:
            st.kind = Storage::Kind::kShared;
            // Rows 16 bytes longer: the 8 rows one ldmatrix phase reads fall in different banks.
            if (layouts_.matrix_operand_fragments.contains(id) && st.shape.size() == 2)
              st.pitch = st.shape.back() + 8;
            break;
          case FragmentLayout::kMatrix: declare_matrix_accumulator(sym, st, layouts_.matrix_plans.at(id)); break;
          case FragmentLayout::kMatrixOperand:
            declare_matrix_operand(sym, st, layouts_.matrix_plans.at(layouts_.register_operands.at(id)));
            break;
          case FragmentLayout::kMatrixRows:
            st.kind = Storage::Kind::kMatrixRows;
            st.plan = layouts_.row_vector_plan;
            st.slots = 2 * st.plan.tiles_m;
            st.id = new_var(sym.name, sym.dtype, st.slots);
            break;
        }
        break;
      case SymbolKind::kLocal:
        st.kind = Storage::Kind::kPrivate;
        st.id = new_var(sym.name, sym.dtype, sym.shape.empty() ? 0 : static_cast<int32_t>(numel(st.shape)));
        break;
      case SymbolKind::kMbarrier: {
        st.kind = Storage::Kind::kMbarrier;
        MbarrierState mb;
        mb.count = st.shape.empty() ? 1 : st.shape[0];
        mb.expected = sym.arrivals;
        mb.pending_arrivals = new_var(absl::StrCat(sym.name, "_arrivals"), DType::kI32, static_cast<int32_t>(mb.count));
        mb.pending_bytes = new_var(absl::StrCat(sym.name, "_bytes"), DType::kI32, static_cast<int32_t>(mb.count));
        mb.parity = new_var(absl::StrCat(sym.name, "_parity"), DType::kI32, static_cast<int32_t>(mb.count));
        mbarriers_[id] = mb;
        break;
      }
      default:
        break;  // loop variables are bound where their loop is lowered
    }
    if (st.kind == Storage::Kind::kShared) {
      st.id = static_cast<uint32_t>(fn_.shared.size());
      // A swizzled tile starts at its 8-row pattern's size (the descriptors' base offset is 0).
      fn_.shared.push_back({sym.name, sym.dtype, st.buffer_elements(), st.swizzled ? 8 * st.swizzle : 16});
    } else if (st.kind == Storage::Kind::kDistributed) {
      st.slots = static_cast<int32_t>((numel(st.shape) + kernel_.threads - 1) / kernel_.threads);
      st.id = new_var(sym.name, sym.dtype, st.slots);
    }
  }
  plan_staged_gemms();
  const int64_t limit = target_.shared_memory_per_block;
  // Padded operand rows are a speed-up only: a kernel they would not fit keeps dense rows.
  if (fn_.shared_bytes() > limit)
    for (SymbolId id : layouts_.padded_operand_tiles)
      if (Storage& st = storage_[id]; st.pitch > 0) {
        st.pitch = 0;
        fn_.shared[st.id].count = st.buffer_elements();
      }
  const int64_t shared_bytes = fn_.shared_bytes();
  if (shared_bytes > limit)
    return absl::ResourceExhaustedError(absl::StrCat(
        "kernel ", kernel_.name, ": shared tiles", layouts_.by_symbol.empty() ? "" : " and shared-backed fragments",
        " need ", shared_bytes, " bytes; ", target_.name(), " offers ", limit));
  scratch_budget_bytes_ = std::min(kMaxScratchBytes, limit - shared_bytes);

  RETURN_IF_ERROR(order_blocks());
  if (needs_schedule(kernel_)) {
    scheduled_ = true;
    RETURN_IF_ERROR(lower_scheduled(kernel_.body));
  } else {
    RETURN_IF_ERROR(lower_block(kernel_.body));
  }

  if (named_used_) {  // generations and counts start at zero
    simt::Body init;
    RETURN_IF_ERROR(into(init, [&] {
      return for_range("n", i32(0), i32(16), true, [&](const simt::Expr& i) {
        assign_at(named_count_, i, i32(0));
        assign_at(named_gen_, i, i32(0));
        return absl::OkStatus();
      });
    }));
    fn_.body.insert(fn_.body.begin(), init.begin(), init.end());
  }
  if (async_proxy_reads_ && generic_core_writes_) add_proxy_fences(fn_.body);
  if (profile_) RETURN_IF_ERROR(finish_profile());
  if (fn_.shared_bytes() > limit)
    return absl::ResourceExhaustedError(absl::StrCat("kernel ", kernel_.name, ": shared memory with the lowering's scratch is ",
                                                     fn_.shared_bytes(), " bytes; ", target_.name(), " offers ", limit));
  unroll_marked_loops(fn_);
  return std::move(fn_);
}

// Blocks of a 2-D grid that multiply tiles are handed out in groups of kBlockGroupRows grid rows,
// down each column of the group before the next column: the blocks running at one time then read
// a few rows of A and a few columns of B, which stay in L2, instead of every column of B (a whole
// B per wave of blocks, from DRAM, for row-major order). Blocks are independent, so any
// one-to-one order is the same kernel; clusters keep the hardware order (their blocks must be
// neighbours).
absl::Status Lowerer::order_blocks() {
  constexpr int64_t kBlockGroupRows = 8;
  bool multiplies = false;
  visit_stmts(kernel_.body, [&](const Stmt& s) { multiplies |= s.as<GemmOp>() != nullptr; });
  if (!multiplies || kernel_.grid.size() < 2 || !kernel_.cluster.empty()) return absl::OkStatus();
  if (std::optional<int64_t> rows = const_int_value(kernel_.grid[1]); rows && *rows == 1) return absl::OkStatus();
  ASSIGN_OR_RETURN(simt::Expr gx, expr(kernel_.grid[0]));
  ASSIGN_OR_RETURN(simt::Expr gy, expr(kernel_.grid[1]));
  uint32_t columns = new_var("grid_x", DType::kI32), linear = new_var("block_linear", DType::kI32),
           group = new_var("block_group", DType::kI32), rows = new_var("group_rows", DType::kI32),
           at = new_var("in_group", DType::kI32);
  assign(columns, simt::Expr::cast(DType::kI32, gx));
  assign(linear, add(mul(simt::Expr::builtin(simt::Builtin::kWorkgroupIdY), var(columns)),
                     simt::Expr::builtin(simt::Builtin::kWorkgroupIdX)));
  const simt::Expr per_group = mul(var(columns), i32(kBlockGroupRows));
  assign(group, bin(BinaryOp::kDiv, var(linear), per_group));
  const simt::Expr first_row = mul(var(group), i32(kBlockGroupRows));
  assign(rows, simt::Expr::call(Func::kMin, {bin(BinaryOp::kSub, simt::Expr::cast(DType::kI32, gy), first_row),
                                             i32(kBlockGroupRows)}));
  assign(at, bin(BinaryOp::kSub, var(linear), mul(var(group), per_group)));
  block_y_ = new_var("block_y", DType::kI32);
  block_x_ = new_var("block_x", DType::kI32);
  assign(*block_y_, add(first_row, bin(BinaryOp::kMod, var(at), var(rows))));
  assign(*block_x_, bin(BinaryOp::kDiv, var(at), var(rows)));
  return absl::OkStatus();
}

// ---- statements ----

absl::Status Lowerer::lower_block(const Block& block) {
  for (const Stmt& s : block) RETURN_IF_ERROR(lower_stmt(s));
  return absl::OkStatus();
}

absl::Status Lowerer::declare(const Stmt&, const DeclareOp& op) {
  const Symbol& sym = kernel_.symbol(op.symbol);
  const Storage& st = storage_[op.symbol];
  if (sym.kind == SymbolKind::kMbarrier) {
    const MbarrierState& mb = mbarriers_.at(op.symbol);
    return for_range("mbi", i32(0), i32(mb.count), true, [&](const simt::Expr& i) {
      assign_at(mb.pending_arrivals, i, i32(mb.expected));
      assign_at(mb.pending_bytes, i, i32(0));
      assign_at(mb.parity, i, i32(0));
      return absl::OkStatus();
    });
  }
  if (sym.kind == SymbolKind::kLocal) {  // locals start at zero
    simt::Expr zero = is_float(sym.dtype) ? simt::Expr::float_const(0, DType::kF32) : i32(0);
    if (st.shape.empty()) {
      assign(st.id, zero);
      return absl::OkStatus();
    }
    return for_range("li", i32(0), i32(numel(st.shape)), false, [&](const simt::Expr& i) {
      assign_at(st.id, i, zero);
      return absl::OkStatus();
    });
  }
  return absl::OkStatus();  // tiles need no code: their storage exists for the whole kernel
}

absl::Status Lowerer::lower_stmt(const Stmt& s) {
  auto collective = [&](const std::function<absl::Status()>& fn) -> absl::Status {
    std::vector<Access> acc = accesses_of(s);
    order_accesses(acc);
    RETURN_IF_ERROR(fn());
    tracker_.record(acc);
    return absl::OkStatus();
  };
  if (const auto* d = s.as<DeclareOp>()) return declare(s, *d);
  if (const auto* c = s.as<CopyOp>()) return collective([&] { return lower_copy(s, c->src, c->dst); });
  if (s.as<CopyAsyncOp>() != nullptr) return collective([&] { return lower_mbarrier_op(s); });
  if (const auto* f = s.as<FillOp>()) return collective([&] { return lower_fill(s, *f); });
  if (const auto* g = s.as<GemmOp>()) return collective([&] { return lower_gemm(s, *g); });
  if (const auto* r = s.as<ReduceOp>()) return collective([&] { return lower_reduce(s, *r); });
  if (const auto* p = s.as<ParallelOp>()) return collective([&] { return lower_parallel(s, *p); });
  // A warpgroup product left in flight (a pipeline's deferred wait) completes before control
  // flow: the statements that would wait for it may be inside a branch not taken.
  if (s.as<ForOp>() != nullptr || s.as<IfOp>() != nullptr || s.as<AssignOp>() != nullptr ||
      s.as<AtomicAddOp>() != nullptr)
    RETURN_IF_ERROR(finish_warpgroup_products());
  if (const auto* f = s.as<ForOp>()) {
    if (thread_dep_.makes_divergent(s)) return lower_thread_stmt(s);
    return lower_for(s, *f);
  }
  if (const auto* i = s.as<IfOp>()) {
    if (thread_dep_.makes_divergent(s)) return lower_thread_stmt(s);
    return lower_if(s, *i);
  }
  if (s.as<AssignOp>() != nullptr || s.as<AtomicAddOp>() != nullptr) return lower_thread_stmt(s);
  if (s.as<BarrierOp>() != nullptr) {
    if (!tracker_.empty()) barrier_now();  // one with nothing to order is redundant here
    return absl::OkStatus();
  }
  if (s.as<SubgroupBarrierOp>() != nullptr) {
    simt::Stmt b;
    b.kind = simt::StmtKind::kBarrier;
    b.barrier = simt::BarrierKind::kSubgroup;
    emit(std::move(b));
    fn_.uses_subgroup_ops = true;
    return absl::OkStatus();
  }
  if (const auto* n = s.as<NamedBarrierOp>()) return lower_named_barrier(s, *n, role_);
  if (s.as<MbarrierArriveOp>() != nullptr || s.as<MbarrierExpectTxOp>() != nullptr) return lower_mbarrier_op(s);
  if (s.as<MbarrierWaitOp>() != nullptr) return absl::InternalError("a wait outside the merged schedule");
  if (s.as<FenceOp>() != nullptr) return absl::OkStatus();  // every op is ordered by barriers already
  if (s.as<ClusterSyncOp>() != nullptr) {
    if (!fn_.has_cluster()) return unsupported(s, "cluster_sync in a kernel without cluster(...)");
    if (role_ != "block") return unsupported(s, "cluster_sync inside a role");
    simt::Stmt b;  // a superset of the workgroup barrier: nothing is left to order after it
    b.kind = simt::StmtKind::kBarrier;
    b.barrier = simt::BarrierKind::kCluster;
    emit(std::move(b));
    tracker_.clear();
    return absl::OkStatus();
  }
  if (s.as<RoleOp>() != nullptr) return absl::InternalError("a role outside the merged schedule");
  return unsupported(s, stmt_op_name(s));
}

absl::Status Lowerer::lower_for(const Stmt& s, const ForOp& op) {
  if (const WorkgroupGemm* w = workgroup_gemm(s)) return lower_workgroup_gemm(op, *w);
  if (std::optional<PipelinePlan> plan = plan_pipeline(s, op)) return lower_pipelined(s, op, *plan);
  ASSIGN_OR_RETURN(simt::Expr begin, expr(op.begin));
  ASSIGN_OR_RETURN(simt::Expr end, expr(op.end));
  const bool unroll = op.kind == LoopKind::kUnroll && begin.kind == simt::ExprKind::kConst &&
                      end.kind == simt::ExprKind::kConst;
  BarrierTracker before = tracker_;
  RETURN_IF_ERROR(for_range(kernel_.symbol(op.var).name, begin, end, unroll, [&](const simt::Expr& v) -> absl::Status {
    bound_[op.var] = v;
    RETURN_IF_ERROR(lower_block(op.body));
    // The next iteration's first ops may conflict with this one's last (loop-carried).
    if (!tracker_.empty()) barrier_now();
    return absl::OkStatus();
  }));
  bound_.erase(op.var);
  (void)s;
  tracker_ = before;  // a loop that runs no iteration leaves what was pending before it
  return absl::OkStatus();
}

absl::Status Lowerer::thread_if(const IfOp& op, const std::function<absl::Status(const Block&)>& lower_body) {
  ASSIGN_OR_RETURN(simt::Expr cond, expr(op.condition));
  simt::Stmt st;
  st.kind = simt::StmtKind::kIf;
  st.operands.push_back(simt::Expr::cast(DType::kBool, std::move(cond)));
  RETURN_IF_ERROR(into(st.body, [&] { return lower_body(op.then_body); }));
  RETURN_IF_ERROR(into(st.else_body, [&] { return lower_body(op.else_body); }));
  emit(std::move(st));
  return absl::OkStatus();
}

absl::Status Lowerer::lower_if(const Stmt& s, const IfOp& op) {
  ASSIGN_OR_RETURN(simt::Expr cond, expr(op.condition));
  simt::Stmt st;
  st.kind = simt::StmtKind::kIf;
  st.operands.push_back(simt::Expr::cast(DType::kBool, std::move(cond)));
  BarrierTracker before = tracker_;
  RETURN_IF_ERROR(into(st.body, [&] { return lower_block(op.then_body); }));
  BarrierTracker after_then = tracker_;
  tracker_ = before;
  RETURN_IF_ERROR(into(st.else_body, [&] { return lower_block(op.else_body); }));
  tracker_.merge(after_then);
  emit(std::move(st));
  (void)s;
  return absl::OkStatus();
}

namespace {

// Thread-level statements: each active thread runs them for itself.
class ThreadCode {
 public:
  explicit ThreadCode(Lowerer& l) : l_(l) {}

  absl::Status block(const Block& b) {
    for (const Stmt& s : b) RETURN_IF_ERROR(stmt(s));
    return absl::OkStatus();
  }

  absl::Status stmt(const Stmt& s) {
    if (const auto* a = s.as<AssignOp>()) {
      ASSIGN_OR_RETURN(simt::Expr value, l_.expr(a->value));
      ASSIGN_OR_RETURN(std::vector<simt::Expr> idx, indices(a->indices));
      return l_.write_element(a->target, idx, std::move(value));
    }
    if (const auto* a = s.as<AtomicAddOp>()) return atomic(s, *a);
    if (const auto* i = s.as<IfOp>()) return l_.thread_if(*i, [&](const Block& b) { return block(b); });
    if (const auto* f = s.as<ForOp>()) {
      ASSIGN_OR_RETURN(simt::Expr begin, l_.expr(f->begin));
      ASSIGN_OR_RETURN(simt::Expr end, l_.expr(f->end));
      RETURN_IF_ERROR(l_.for_range(l_.kernel_.symbol(f->var).name, begin, end, false, [&](const simt::Expr& v) {
        l_.bound_[f->var] = v;
        return block(f->body);
      }));
      l_.bound_.erase(f->var);
      return absl::OkStatus();
    }
    if (const auto* d = s.as<DeclareOp>()) return l_.declare(s, *d);
    return l_.unsupported(s, absl::StrCat(av(stmt_op_name(s)), " under thread-dependent control flow"));
  }

 private:
  absl::StatusOr<std::vector<simt::Expr>> indices(const std::vector<Expr>& in) {
    std::vector<simt::Expr> out;
    for (const Expr& i : in) {
      ASSIGN_OR_RETURN(simt::Expr v, l_.expr(i));
      out.push_back(simt::Expr::cast(DType::kI32, std::move(v)));
    }
    return out;
  }

  absl::Status atomic(const Stmt& s, const AtomicAddOp& a) {
    ASSIGN_OR_RETURN(simt::Expr value, l_.expr(a.value));
    ASSIGN_OR_RETURN(std::vector<simt::Expr> idx, indices(a.indices));
    const Storage& st = l_.storage_[a.target];
    DType type = l_.kernel_.symbol(a.target).dtype;
    simt::Stmt op;
    op.kind = simt::StmtKind::kAtomicAdd;
    op.id = st.id;
    if (st.kind == Storage::Kind::kTensor) {
      op.space = Space::kGlobal;
      ASSIGN_OR_RETURN(simt::Expr inb, l_.tensor_in_bounds(st, idx));
      ASSIGN_OR_RETURN(simt::Expr flat, l_.tensor_flat_index(st, idx));
      op.id = static_cast<uint32_t>(st.id);  // tensor storage ids are parameter positions
      op.operands.push_back(std::move(flat));
      op.operands.push_back(simt::Expr::cast(type, std::move(value)));
      return l_.if_then(std::move(inb), [&] {
        l_.emit(std::move(op));
        return absl::OkStatus();
      });
    }
    if (st.kind == Storage::Kind::kShared) {
      l_.generic_core_writes_ |= st.swizzled;
      op.space = Space::kShared;
      op.operands = {l_.shared_index(st, idx), simt::Expr::cast(type, value)};
      l_.emit(std::move(op));
      return absl::OkStatus();
    }
    return l_.unsupported(s, "atomic_add on this kind of storage");
  }

  Lowerer& l_;
};

}  // namespace

absl::Status Lowerer::lower_thread_stmt(const Stmt& s) {
  std::vector<Access> acc = accesses_of(s);
  order_accesses(acc);
  auto run = [&] { return ThreadCode(*this).stmt(s); };
  // Inside a role, only the role's threads run its thread-level statements.
  if (role_threads_ > 0 && role_threads_ < kernel_.threads) {
    simt::Expr in_role = bin(BinaryOp::kAnd, bin(BinaryOp::kGe, tid(), i32(role_begin_)),
                             bin(BinaryOp::kLt, tid(), i32(role_begin_ + role_threads_)));
    RETURN_IF_ERROR(if_then(in_role, run));
  } else {
    RETURN_IF_ERROR(run());
  }
  tracker_.record(acc);
  return absl::OkStatus();
}

// ---- entry points ----

absl::StatusOr<simt::Function> lower_kernel(const Kernel& kernel, const TargetDescription& target,
                                            const LowerOptions& options) {
  if (kernel.threads <= 0 || kernel.threads > target.max_threads_per_block)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", kernel.name, ": ", kernel.threads,
                                                   " threads per block; ", target.name(), " allows at most ",
                                                   target.max_threads_per_block));
  // Register-staged pipelines are planned before the rest of the kernel claims its scratch; when
  // that runs out of shared memory, the lowering is redone with less given to them: first the
  // full reserve kept free, then no single-buffer pipelines.
  bool full_reserve = false, no_single_buffer = false;
  for (;;) {
    Lowerer lowerer(kernel, target, options);
    if (full_reserve) lowerer.full_pipeline_reserve();
    if (no_single_buffer) lowerer.no_single_buffer_pipelines();
    absl::StatusOr<simt::Function> f = lowerer.run();
    if (f.ok() || !absl::IsResourceExhausted(f.status())) return f;
    if (!full_reserve && lowerer.used_small_pipeline_reserve()) {
      full_reserve = true;
    } else if (!no_single_buffer && lowerer.used_single_buffer_pipeline()) {
      no_single_buffer = true;
    } else {
      return f;
    }
  }
}

}  // namespace tilert::lowering
