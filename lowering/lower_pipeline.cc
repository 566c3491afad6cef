// Pipelined loops as asynchronous multi-stage pipelines, on targets with asynchronous copies
// (TargetFeature::kAsyncCopy: PTX cp.async); SPIR-V targets stage through registers instead
// (lower_register_pipeline.cc). A loop qualifies when its body starts with copies of
// global tensors into whole shared tiles ("staged tiles") that nothing else in the kernel writes
// or mentions outside the loop. Each staged tile gets `stages` buffers; the copies for iteration
// i + stages - 1 are issued while iteration i computes:
//
//   prologue: for s < stages - 1: [if s < trip] issue(s) into buffer s; commit   (a loop)
//   for i in 0 .. trip:
//     wait until at most stages - 2 groups are in flight   (this thread's copies for i landed)
//     workgroup barrier     (everyone's copies for i are visible; everyone is done with i - 1)
//     [if i + stages - 1 < trip] issue(i + stages - 1) into buffer (i + stages - 1) % stages
//     commit
//     the rest of the body, reading buffer i % stages
//   wait for every group; workgroup barrier
//
// The buffer written in iteration i held iteration i - 1's data, which the barrier has retired.
// When the body's warpgroup gemms keep their product in flight (wgmma), one spare buffer per tile
// makes it iteration i - 2's, whose products are complete (see README, "Asynchronous pipelines").
// A 16-byte chunk is copied asynchronously when it lies inside the tensor and is 16-byte aligned;
// other chunks (ragged edges, rows whose length is not a multiple of 8 elements) are copied
// element by element through registers, reading zero outside the tensor, which is complete before
// the barrier that publishes it. Elsewhere the loop runs serially (lower_for).
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/passes/access_sets.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

constexpr int kChunkBytes = 16;

}  // namespace

std::optional<Lowerer::PipelinePlan> Lowerer::plan_pipeline(const Stmt& loop, const ForOp& op) {
  if (op.kind != LoopKind::kPipelined || scheduled_) return std::nullopt;
  PipelinePlan plan;
  // Without asynchronous copies, SPIR-V pipelines stage through registers (chunk_load /
  // chunk_store). AMDGCN emits those statements too, but its GEMMs multiply on the plain path
  // (no MFMA / WMMA plans yet), whose accumulators already fill the VGPRs: staging registers made
  // llc spill there (gfx90a: 0 -> 260 bytes of scratch for examples/gemm.tile), so AMD loops
  // stay serial until that can be measured on hardware.
  plan.register_staged = !target_.has(TargetFeature::kAsyncCopy);
  if (plan.register_staged && target_.api != ApiKind::kSpirv) return std::nullopt;
  std::set<SymbolId> tiles;
  int64_t stage_bytes = 0;
  for (const Stmt& s : op.body) {
    const auto* c = s.as<CopyOp>();
    if (!c) break;
    const Symbol& dst = kernel_.symbol(c->dst.buffer);
    if (storage_[c->src.buffer].kind != Storage::Kind::kTensor || dst.kind != SymbolKind::kShared) break;
    const Storage& st = storage_[c->dst.buffer];
    const int64_t elem = dtype_size(dst.dtype);
    if (!copies_in_chunks(*c) || tiles.contains(c->dst.buffer)) return std::nullopt;
    // SPIR-V keeps chunk-stored 16-bit shared tiles 16-bit as f16 with float16 arithmetic and
    // as bf16 (packed two to a word); f16 without the arithmetic is widened to 32 bits there,
    // twice the bytes the stage count is chosen for.
    if (plan.register_staged && target_.api == ApiKind::kSpirv && dst.dtype == DType::kF16 &&
        !target_.has(TargetFeature::kFloat16Arithmetic))
      return std::nullopt;
    tiles.insert(c->dst.buffer);
    plan.copies.push_back(c);
    const int64_t pitch = st.swizzled ? 0 : padded_row_pitch(st.shape, elem);
    stage_bytes += (st.swizzled ? st.buffer_elements()
                                   : pitch ? numel(st.shape) / st.shape.back() * pitch : numel(st.shape)) * elem;
  }
  if (plan.copies.empty()) return std::nullopt;
  plan.rest_begin = plan.copies.size();
  // Nothing but the loop's copies may write a staged tile, and nothing outside the loop may
  // touch one (its buffers rotate inside the loop only).
  std::set<const Stmt*> inside;
  visit_stmts(op.body, [&](const Stmt& s) { inside.insert(&s); });
  bool ok = true;
  auto check = [&](const Stmt& s, bool in_rest) {
    for (const Access& a : statement_accesses(kernel_, s))
      if (tiles.contains(a.buffer) && (!in_rest || a.write)) ok = false;
  };
  visit_stmts(op.body, [&](const Stmt& s) {
    bool is_copy = false;
    for (const CopyOp* c : plan.copies) is_copy |= s.as<CopyOp>() == c;
    if (!is_copy) check(s, true);
  });
  visit_stmts(kernel_.body, [&](const Stmt& s) {
    if (&s != &loop && !inside.contains(&s)) check(s, false);
  });
  if (!ok) return std::nullopt;
  // Room for what the rest of the kernel may still add (scratch, matrix staging) is kept free.
  const int64_t other = fn_.shared_bytes() - stage_bytes + scratch_budget_bytes_;
  absl::StatusOr<int> stages = choose_pipeline_stages(stage_bytes, op.stages, target_, std::max<int64_t>(0, other));
  if (plan.register_staged && !full_reserve_ && (!stages.ok() || *stages < 2) && op.stages != 1) {
    const int64_t small = fn_.shared_bytes() - stage_bytes + std::min<int64_t>(scratch_budget_bytes_, 4096);
    stages = choose_pipeline_stages(stage_bytes, 2, target_, std::max<int64_t>(0, small));
    if (stages.ok()) small_reserve_used_ = true;
  }
  if (plan.register_staged) {
    // Registers hold one stage ahead, at most 16 chunks (64 words) a thread, into two buffers;
    // where two do not fit, into one that the body has finished reading (a second barrier per
    // iteration; the loads still overlap the body). Small shared memories (Vulkan's 48 KB) rarely
    // hold two stages next to the full reserve; a small one usually covers what follows (matrix
    // copy-out staging), and lower_kernel redoes the lowering with the full reserve when it does not.
    constexpr int64_t kMaxChunksPerThread = 16;
    int64_t chunks = 0;
    for (const CopyOp* c : plan.copies) chunks += register_chunks_per_thread(*c);
    if (!stages.ok() || chunks > kMaxChunksPerThread || op.stages == 1) return std::nullopt;
    if (*stages < 2 && no_single_buffer_) return std::nullopt;
    plan.stages = 2;
    plan.buffers = std::min(*stages, 2);
    single_buffer_used_ |= plan.buffers == 1;
    return plan;
  }
  if (!stages.ok() || *stages < 2) return std::nullopt;
  plan.stages = *stages;
  plan.buffers = *stages;
  // Warpgroup gemms can leave their product in flight if a spare buffer fits, and only when they
  // read nothing but staged tiles: another tile could be overwritten by ordinary stores after the
  // next barrier while the product still reads it.
  bool warpgroup_reads = false, only_staged = true;
  visit_stmts(Block(op.body.begin() + static_cast<std::ptrdiff_t>(plan.rest_begin), op.body.end()), [&](const Stmt& s) {
    const auto* g = s.as<GemmOp>();
    if (!g || storage_[g->c.buffer].kind != Storage::Kind::kMatrix || !storage_[g->c.buffer].plan.warpgroup) return;
    warpgroup_reads = true;
    only_staged &= tiles.contains(g->a.buffer) && tiles.contains(g->b.buffer);
  });
  if (warpgroup_reads && only_staged) {
    absl::StatusOr<int> spare = choose_pipeline_stages(stage_bytes, plan.stages + 1, target_, std::max<int64_t>(0, other));
    if (spare.ok() && *spare == plan.stages + 1) plan.buffers = plan.stages + 1;
  }
  (void)plan_tensor_copies(plan);
  return plan;
}

bool Lowerer::copies_in_chunks(const CopyOp& c) const {
  const Symbol& src = kernel_.symbol(c.src.buffer);
  const Symbol& dst = kernel_.symbol(c.dst.buffer);
  if (storage_[c.src.buffer].kind != Storage::Kind::kTensor || dst.kind != SymbolKind::kShared) return false;
  const Storage& st = storage_[c.dst.buffer];
  const int64_t elem = dtype_size(dst.dtype);
  // Chunks run along the tile's last dimension, which must be the tensor's too (contiguous).
  const bool last_dim_in_region = c.src.ranges.size() < src.shape.size() || !c.src.ranges.back().index;
  return src.dtype == dst.dtype && (elem == 2 || elem == 4) && region_is_whole(kernel_, c.dst) &&
         last_dim_in_region && !st.shape.empty() && (st.shape.back() * elem) % kChunkBytes == 0;
}

absl::Status Lowerer::lower_chunked_copy(const CopyOp& c) {
  PipelinePlan plan;
  plan.copies.push_back(&c);
  RETURN_IF_ERROR(issue_stage_copies(plan, i32(0)));
  async_commit();
  async_wait(0);
  // cp.async writes through the generic proxy, warpgroup gemms read swizzled tiles through the
  // async one: barriers get proxy fences (add_proxy_fences).
  generic_core_writes_ |= storage_[c.dst.buffer].swizzled;
  return absl::OkStatus();
}

void Lowerer::async_commit() {
  simt::Stmt s;
  s.kind = simt::StmtKind::kAsyncCommit;
  emit(std::move(s));
}

void Lowerer::async_wait(int in_flight) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kAsyncWait;
  s.a = static_cast<uint32_t>(in_flight);
  emit(std::move(s));
}

absl::StatusOr<simt::Expr> Lowerer::staged_tile_in_chunks(const CopyOp& c) {
  const Storage& dst = storage_[c.dst.buffer];
  const Storage& src = storage_[c.src.buffer];
  const int64_t per_chunk = kChunkBytes / dtype_size(kernel_.symbol(c.dst.buffer).dtype);
  std::vector<simt::Expr> first(dst.shape.size(), i32(0)), last;
  for (int64_t extent : dst.shape) last.push_back(i32(extent - 1));
  ASSIGN_OR_RETURN(std::vector<simt::Expr> tile_first, region_coords(c.src, first));
  ASSIGN_OR_RETURN(std::vector<simt::Expr> tile_last, region_coords(c.src, last));
  ASSIGN_OR_RETURN(simt::Expr first_inside, tensor_in_bounds(src, tile_first));
  ASSIGN_OR_RETURN(simt::Expr last_inside, tensor_in_bounds(src, tile_last));
  ASSIGN_OR_RETURN(simt::Expr tile_flat, tensor_flat_index(src, tile_first));
  ASSIGN_OR_RETURN(simt::Expr row_length, expr(kernel_.symbol(c.src.buffer).shape.back()));
  auto multiple_of_chunk = [&](simt::Expr v) {
    return bin(BinaryOp::kEq, bin(BinaryOp::kMod, simt::Expr::cast(DType::kI32, std::move(v)), i32(per_chunk)),
               i32(0));
  };
  return bin(BinaryOp::kAnd, bin(BinaryOp::kAnd, std::move(first_inside), std::move(last_inside)),
             bin(BinaryOp::kAnd, multiple_of_chunk(std::move(tile_flat)), multiple_of_chunk(std::move(row_length))));
}

absl::Status Lowerer::issue_stage_copies(const PipelinePlan& plan, const simt::Expr& stage) {
  for (const CopyOp* c : plan.copies) {
    Storage& dst = storage_[c->dst.buffer];
    const Storage& src = storage_[c->src.buffer];
    const DType type = kernel_.symbol(c->dst.buffer).dtype;
    const int64_t per_chunk = kChunkBytes / dtype_size(type);
    const int64_t n = dst.buffer_elements();
    std::vector<int64_t> chunk_shape = dst.shape;
    chunk_shape.back() /= per_chunk;
    simt::Expr base = mul(stage, i32(n));
    // Usually the whole tile lies inside the tensor and its rows start 16-byte aligned: then every
    // chunk is one cp.async with no test of its own. The test is uniform across the block.
    simt::Stmt whole;
    whole.kind = simt::StmtKind::kIf;
    ASSIGN_OR_RETURN(simt::Expr inside, staged_tile_in_chunks(*c));
    whole.operands.push_back(std::move(inside));  // not `= {...}`: that would copy the tree
    // `at`: the chunk's shared and global offsets when the caller has them at hand.
    auto unchecked_chunk = [&](const std::vector<simt::Expr>& chunk,
                               std::optional<std::pair<simt::Expr, simt::Expr>> at = std::nullopt) -> absl::Status {
      simt::Stmt cp;
      cp.kind = simt::StmtKind::kAsyncCopy;
      cp.id = dst.id;
      cp.array = src.id;
      cp.a = kChunkBytes;
      if (at) {
        cp.operands.push_back(std::move(at->first));
        cp.operands.push_back(std::move(at->second));
      } else {
        std::vector<simt::Expr> rel = chunk;
        rel.back() = mul(rel.back(), i32(per_chunk));
        ASSIGN_OR_RETURN(std::vector<simt::Expr> coords, region_coords(c->src, rel));
        ASSIGN_OR_RETURN(simt::Expr flat, tensor_flat_index(src, coords));
        cp.operands.push_back(add(base, tile_offset(dst, rel)));
        cp.operands.push_back(std::move(flat));
      }
      emit(std::move(cp));
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(into(whole.body, [&]() -> absl::Status {
      const int64_t row_chunks = chunk_shape.back(), threads = kernel_.threads;
      // Swizzled tiles need rounds of whole 8-row patterns for the constant shared step below.
      const bool whole_groups = !dst.swizzled || (threads % row_chunks == 0 && (threads / row_chunks) % 8 == 0);
      if (chunk_shape.size() != 2 || threads % row_chunks != 0 || !whole_groups)
        return for_cyclic(chunk_shape, /*unroll=*/true, [&](const std::vector<simt::Expr>& chunk) {
          return unchecked_chunk(chunk);
        });
      // Rows of a 2-D tile: when the block covers whole rows per round, a thread keeps its chunk
      // column and moves down threads / row_chunks rows a round. Its first chunk's offsets are
      // worked out once; a round adds a constant to the shared offset and a row step (a run-time
      // value: the tensor's row length) to the global one. Consecutive threads take consecutive
      // chunks of a row: a warp reads whole 128-byte lines of the tensor, and writes them to
      // padded rows or swizzled rows without bank conflicts.
      const int64_t rows = chunk_shape[0], rows_per_round = threads / row_chunks;
      uint32_t row0 = new_var("chunk_row", DType::kI32), col = new_var("chunk_col", DType::kI32);
      assign(row0, bin(BinaryOp::kDiv, tid(), i32(row_chunks)));
      assign(col, bin(BinaryOp::kMod, tid(), i32(row_chunks)));
      const std::vector<simt::Expr> first_rel = {var(row0), mul(var(col), i32(per_chunk))};
      uint32_t dst0 = new_var("chunk_dst", DType::kI32), src0 = new_var("chunk_src", DType::kI32),
               src_step = new_var("chunk_src_step", DType::kI32);
      assign(dst0, add(base, tile_offset(dst, first_rel)));
      ASSIGN_OR_RETURN(std::vector<simt::Expr> first_at, region_coords(c->src, first_rel));
      ASSIGN_OR_RETURN(simt::Expr first_flat, tensor_flat_index(src, first_at));
      assign(src0, std::move(first_flat));
      ASSIGN_OR_RETURN(std::vector<simt::Expr> origin, region_coords(c->src, {i32(0), i32(0)}));
      ASSIGN_OR_RETURN(std::vector<simt::Expr> one_round, region_coords(c->src, {i32(rows_per_round), i32(0)}));
      ASSIGN_OR_RETURN(simt::Expr origin_flat, tensor_flat_index(src, origin));
      ASSIGN_OR_RETURN(simt::Expr round_flat, tensor_flat_index(src, one_round));
      assign(src_step, bin(BinaryOp::kSub, std::move(round_flat), std::move(origin_flat)));
      // Rows per round are whole 8-row swizzle patterns (a row's chunk permutation repeats), so
      // in either layout a round moves the shared offset by a constant.
      const int64_t round_step =
          rows_per_round * (dst.swizzled ? dst.swizzle / dtype_size(fn_.shared[dst.id].type) : dst.padded_shape().back());
      return for_range("round", i32(0), i32((rows + rows_per_round - 1) / rows_per_round), true,
                       [&](const simt::Expr& r) -> absl::Status {
        simt::Expr row = add(var(row0), mul(r, i32(rows_per_round)));
        std::pair<simt::Expr, simt::Expr> at{add(var(dst0), mul(r, i32(round_step))),
                                             add(var(src0), mul(r, var(src_step)))};
        if (rows % rows_per_round == 0) return unchecked_chunk({row, var(col)}, std::move(at));
        return if_then(bin(BinaryOp::kLt, row, i32(rows)), [&] { return unchecked_chunk({row, var(col)}, at); });
      });
    }));
    // Otherwise each chunk is checked: inside and aligned, it is copied asynchronously; else
    // element by element (a loop: this is the rare path).
    RETURN_IF_ERROR(into(whole.else_body, [&] {
     return for_cyclic(chunk_shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& chunk) -> absl::Status {
      std::vector<simt::Expr> rel = chunk;
      rel.back() = mul(rel.back(), i32(per_chunk));
      std::vector<simt::Expr> last = rel;
      last.back() = add(last.back(), i32(per_chunk - 1));
      ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(c->src, rel));
      ASSIGN_OR_RETURN(std::vector<simt::Expr> at_last, region_coords(c->src, last));
      ASSIGN_OR_RETURN(simt::Expr first_in, tensor_in_bounds(src, at));
      ASSIGN_OR_RETURN(simt::Expr last_in, tensor_in_bounds(src, at_last));
      uint32_t flat = new_var("src", DType::kI32);
      ASSIGN_OR_RETURN(simt::Expr flat_value, tensor_flat_index(src, at));
      assign(flat, std::move(flat_value));
      uint32_t dst_at = new_var("dst", DType::kI32);
      assign(dst_at, add(base, tile_offset(dst, rel)));
      simt::Expr aligned = bin(BinaryOp::kEq, bin(BinaryOp::kMod, var(flat), i32(per_chunk)), i32(0));
      simt::Stmt st;
      st.kind = simt::StmtKind::kIf;
      st.operands.push_back(
          bin(BinaryOp::kAnd, bin(BinaryOp::kAnd, std::move(first_in), std::move(last_in)), std::move(aligned)));
      RETURN_IF_ERROR(into(st.body, [&] {
        simt::Stmt cp;
        cp.kind = simt::StmtKind::kAsyncCopy;
        cp.id = dst.id;
        cp.array = src.id;
        cp.a = kChunkBytes;
        cp.operands = {var(dst_at), var(flat)};
        emit(std::move(cp));
        return absl::OkStatus();
      }));
      RETURN_IF_ERROR(into(st.else_body, [&]() -> absl::Status {
        RETURN_IF_ERROR(for_range("ce", i32(0), i32(per_chunk), false, [&](const simt::Expr& j) -> absl::Status {
          std::vector<simt::Expr> e = rel;
          e.back() = add(e.back(), j);
          ASSIGN_OR_RETURN(std::vector<simt::Expr> e_at, region_coords(c->src, e));
          ASSIGN_OR_RETURN(simt::Expr v, read_element(c->src.buffer, e_at));
          store_shared(dst.id, add(var(dst_at), j), std::move(v));
          return absl::OkStatus();
        }));
        // Ordinary stores reach warpgroup products (async proxy) only through a proxy fence
        // before the barrier that publishes them: one here, after this path's stores. The
        // cp.async path's writes are covered by the fences add_proxy_fences puts before every
        // workgroup barrier of a kernel whose swizzled tiles are also written generically.
        if (dst.swizzled) {
          simt::Stmt fence;
          fence.kind = simt::StmtKind::kProxyFence;
          emit(std::move(fence));
        }
        return absl::OkStatus();
      }));
      emit(std::move(st));
      return absl::OkStatus();
    });
    }));
    emit(std::move(whole));
  }
  return absl::OkStatus();
}

void Lowerer::bind_pipeline_var(const ForOp& op, uint32_t first, const simt::Expr& i) {
  uint32_t k = new_var(kernel_.symbol(op.var).name, DType::kI32);
  assign(k, add(var(first), i));
  bound_[op.var] = var(k);
}

absl::Status Lowerer::lower_pipeline_body(const ForOp& op, const PipelinePlan& plan, uint32_t first,
                                          const simt::Expr& i, const simt::Expr& buffer) {
  bind_pipeline_var(op, first, i);
  for (const CopyOp* c : plan.copies) {
    Storage& st = storage_[c->dst.buffer];
    st.stage_offset = mul(buffer, i32(st.buffer_elements()));
  }
  defer_warpgroup_wait_ = plan.buffers > plan.stages;
  absl::Status body = lower_block(Block(op.body.begin() + static_cast<std::ptrdiff_t>(plan.rest_begin), op.body.end()));
  defer_warpgroup_wait_ = false;
  RETURN_IF_ERROR(body);
  for (const CopyOp* c : plan.copies) storage_[c->dst.buffer].stage_offset.reset();
  tracker_.clear();  // the next iteration (or what follows the loop) starts with a barrier
  return absl::OkStatus();
}

absl::Status Lowerer::lower_pipelined(const Stmt& loop, const ForOp& op, const PipelinePlan& plan) {
  const int S = plan.stages, buffers = plan.buffers;
  for (const CopyOp* c : plan.copies) {
    Storage& st = storage_[c->dst.buffer];
    st.pitch = st.swizzled ? 0 : padded_row_pitch(st.shape, dtype_size(kernel_.symbol(c->dst.buffer).dtype));
    fn_.shared[st.id].count = st.buffer_elements() * buffers;
  }
  if (!plan.tensor.empty()) return lower_tensor_pipelined(op, plan, loop);
  if (plan.register_staged) return lower_register_pipelined(op, plan);
  ASSIGN_OR_RETURN(simt::Expr begin, expr(op.begin));
  ASSIGN_OR_RETURN(simt::Expr end, expr(op.end));
  uint32_t first = new_var("pipe_begin", DType::kI32), trip = new_var("pipe_trip", DType::kI32);
  assign(first, simt::Expr::cast(DType::kI32, begin));
  assign(trip, bin(BinaryOp::kSub, simt::Expr::cast(DType::kI32, end), var(first)));
  // Issues the copies of iteration `i` (relative to the loop's start) into buffer `stage`.
  auto issue = [&](const simt::Expr& i, const simt::Expr& stage) -> absl::Status {
    bind_pipeline_var(op, first, i);
    return if_then(bin(BinaryOp::kLt, i, var(trip)), [&] { return issue_stage_copies(plan, stage); });
  };

  // The prologue is a loop too: one copy of the issuing code instead of S - 1.
  RETURN_IF_ERROR(for_range("pipe_s", i32(0), i32(S - 1), false, [&](const simt::Expr& s) -> absl::Status {
    RETURN_IF_ERROR(issue(s, s));
    async_commit();
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(for_range("pipe_i", i32(0), var(trip), false, [&](const simt::Expr& i) -> absl::Status {
    async_wait(S - 2);
    barrier_now();
    uint32_t next = new_var("pipe_next", DType::kI32);
    assign(next, add(i, i32(S - 1)));
    // With a spare buffer this overwrites iteration i - 2's, whose products are complete (each
    // gemm waited for all but its own before the barrier above).
    RETURN_IF_ERROR(issue(var(next), bin(BinaryOp::kMod, var(next), i32(buffers))));
    async_commit();
    // Copies in the body stay element by element: a chunked one would wait for every group in
    // flight, the next stages' too.
    const bool outer = in_async_pipeline_;
    in_async_pipeline_ = true;
    absl::Status body = lower_pipeline_body(op, plan, first, i, bin(BinaryOp::kMod, i, i32(buffers)));
    in_async_pipeline_ = outer;
    return body;
  }));
  bound_.erase(op.var);
  RETURN_IF_ERROR(finish_warpgroup_products());
  async_wait(0);
  barrier_now();
  return absl::OkStatus();
}

}  // namespace tilert::lowering
