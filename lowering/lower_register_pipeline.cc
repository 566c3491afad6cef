// Pipelined loops on targets without asynchronous copies (SPIR-V): the next iteration's staged
// tiles travel through registers while the current one computes. Two buffers per staged tile:
//
//   if 0 < trip: load(0); store(0) into buffer 0
//   for i in 0 .. trip:
//     workgroup barrier      (buffer i % 2 is complete; everyone is done with buffer (i + 1) % 2)
//     if i + 1 < trip: load(i + 1)        global -> registers, in flight during the body
//     the rest of the body, reading buffer i % 2
//     if i + 1 < trip: store(i + 1) into buffer (i + 1) % 2     registers -> shared
//   workgroup barrier
//
// Where two buffers do not fit the shared memory, one: the body reads buffer 0, a second barrier
// per iteration retires it, and the store refills it (the loads are still in flight during the
// body; only the store waits for the slowest reader).
//
// load and store move 16-byte chunks (chunk_load / chunk_store), a thread's chunks issued back to
// back, when the tile lies wholly inside the tensor with 16-byte aligned rows (a test uniform
// across the block, the same at load and at store); otherwise load does nothing and store copies
// the tile element by element, reading zero outside the tensor. Element-by-element copies in a
// loop wait for each load in turn; chunks put one memory latency behind a stage instead of one per
// element, and the loads overlap the body's products.
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {
constexpr int64_t kChunkBytes = 16;
constexpr int64_t kWordsPerChunk = kChunkBytes / 4;
}  // namespace

int64_t Lowerer::register_chunks_per_thread(const CopyOp& c) const {
  const int64_t per_chunk = kChunkBytes / dtype_size(kernel_.symbol(c.dst.buffer).dtype);
  const int64_t chunks = numel(storage_[c.dst.buffer].shape) / per_chunk;
  return (chunks + kernel_.threads - 1) / kernel_.threads;
}

absl::Status Lowerer::lower_register_pipelined(const ForOp& op, const PipelinePlan& plan) {
  const bool single = plan.buffers == 1;
  int64_t total_chunks = 0;
  for (const CopyOp* c : plan.copies) total_chunks += register_chunks_per_thread(*c);
  const uint32_t regs = new_var("chunk", DType::kU32, static_cast<int32_t>(total_chunks * kWordsPerChunk));

  // Calls fn(rel, slot) for each chunk this thread moves of copy `c`: rel, the chunk's first
  // element in the tile; slot, its place among the thread's chunks (from `first_slot`). Chunk q of
  // the tile goes to thread q % threads, so neighbouring threads read neighbouring 16 bytes.
  auto for_chunks = [&](const CopyOp& c, int64_t first_slot,
                        const std::function<absl::Status(const std::vector<simt::Expr>&, int64_t)>& fn) -> absl::Status {
    const int64_t per_chunk = kChunkBytes / dtype_size(kernel_.symbol(c.dst.buffer).dtype);
    std::vector<int64_t> chunk_shape = storage_[c.dst.buffer].shape;
    chunk_shape.back() /= per_chunk;
    const int64_t chunks = numel(chunk_shape), threads = kernel_.threads;
    for (int64_t j = 0; j * threads < chunks; ++j) {
      simt::Expr q = add(tid(), i32(j * threads));
      std::vector<simt::Expr> rel = unravel(q, chunk_shape);
      rel.back() = mul(rel.back(), i32(per_chunk));
      if ((j + 1) * threads <= chunks) {
        RETURN_IF_ERROR(fn(rel, first_slot + j));
      } else {
        RETURN_IF_ERROR(if_then(bin(BinaryOp::kLt, q, i32(chunks)), [&] { return fn(rel, first_slot + j); }));
      }
    }
    return absl::OkStatus();
  };

  // Both halves test the tile the same way (the loop variable is bound to the same iteration).
  auto in_chunks = [&](const CopyOp& c, const std::function<absl::Status()>& whole,
                       const std::function<absl::Status()>& ragged) -> absl::Status {
    simt::Stmt st;
    st.kind = simt::StmtKind::kIf;
    ASSIGN_OR_RETURN(simt::Expr inside, staged_tile_in_chunks(c));
    st.operands.push_back(std::move(inside));  // not `= {...}`: that would copy the tree
    RETURN_IF_ERROR(into(st.body, whole));
    RETURN_IF_ERROR(into(st.else_body, ragged));
    emit(std::move(st));
    return absl::OkStatus();
  };

  auto load = [&]() -> absl::Status {
    int64_t slot = 0;
    for (const CopyOp* c : plan.copies) {
      const Storage& src = storage_[c->src.buffer];
      RETURN_IF_ERROR(in_chunks(*c, [&] {
        return for_chunks(*c, slot, [&](const std::vector<simt::Expr>& rel, int64_t k) -> absl::Status {
          ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(c->src, rel));
          ASSIGN_OR_RETURN(simt::Expr flat, tensor_flat_index(src, at));
          simt::Stmt ld;
          ld.kind = simt::StmtKind::kChunkLoad;
          ld.id = regs;
          ld.array = src.id;
          ld.operands = {i32(k * kWordsPerChunk), std::move(flat)};
          emit(std::move(ld));
          return absl::OkStatus();
        });
      }, [] { return absl::OkStatus(); }));
      slot += register_chunks_per_thread(*c);
    }
    return absl::OkStatus();
  };

  auto store = [&](const simt::Expr& buffer) -> absl::Status {
    int64_t slot = 0;
    for (const CopyOp* c : plan.copies) {
      const Storage& dst = storage_[c->dst.buffer];
      simt::Expr base = mul(buffer, i32(dst.buffer_elements()));
      RETURN_IF_ERROR(in_chunks(*c, [&] {
        return for_chunks(*c, slot, [&](const std::vector<simt::Expr>& rel, int64_t k) -> absl::Status {
          simt::Stmt st;
          st.kind = simt::StmtKind::kChunkStore;
          st.space = Space::kShared;
          st.id = dst.id;
          st.array = regs;
          st.operands = {add(base, tile_offset(dst, rel)), i32(k * kWordsPerChunk)};
          emit(std::move(st));
          return absl::OkStatus();
        });
      }, [&] {
        return for_cyclic(dst.shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& rel) -> absl::Status {
          ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(c->src, rel));
          ASSIGN_OR_RETURN(simt::Expr v, read_element(c->src.buffer, at));
          store_shared(dst.id, add(base, tile_offset(dst, rel)), std::move(v));
          return absl::OkStatus();
        });
      }));
      slot += register_chunks_per_thread(*c);
    }
    return absl::OkStatus();
  };

  ASSIGN_OR_RETURN(simt::Expr begin, expr(op.begin));
  ASSIGN_OR_RETURN(simt::Expr end, expr(op.end));
  uint32_t first = new_var("pipe_begin", DType::kI32), trip = new_var("pipe_trip", DType::kI32);
  assign(first, simt::Expr::cast(DType::kI32, begin));
  assign(trip, bin(BinaryOp::kSub, simt::Expr::cast(DType::kI32, end), var(first)));
  RETURN_IF_ERROR(if_then(bin(BinaryOp::kLt, i32(0), var(trip)), [&]() -> absl::Status {
    bind_pipeline_var(op, first, i32(0));
    RETURN_IF_ERROR(load());
    return store(i32(0));
  }));
  RETURN_IF_ERROR(for_range("pipe_i", i32(0), var(trip), false, [&](const simt::Expr& i) -> absl::Status {
    barrier_now();
    uint32_t next = new_var("pipe_next", DType::kI32);
    assign(next, add(i, i32(1)));
    simt::Expr more = bin(BinaryOp::kLt, var(next), var(trip));
    bind_pipeline_var(op, first, var(next));
    RETURN_IF_ERROR(if_then(more, load));
    RETURN_IF_ERROR(lower_pipeline_body(op, plan, first, i, single ? i32(0) : bin(BinaryOp::kMod, i, i32(2))));
    if (single) barrier_now();  // everyone is done reading the buffer the store refills
    bind_pipeline_var(op, first, var(next));
    return if_then(more, [&] { return store(single ? i32(0) : bin(BinaryOp::kMod, var(next), i32(2))); });
  }));
  bound_.erase(op.var);
  barrier_now();
  return absl::OkStatus();
}

}  // namespace tilert::lowering
