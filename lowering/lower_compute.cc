// gemm and reductions on the plain path (gemms without a matrix plan: lower_matrix.cc and
// lower_staged_gemm.cc take the others): every thread computes the accumulator elements it holds;
// operands in registers (distributed fragments) are staged through a shared scratch array in
// chunks of the reduction dimension; reductions combine per-thread partials with subgroup
// reductions (where the target has them) and a shared scratch array, chunked over the outputs so
// the scratch stays within the shared memory the kernel leaves free.
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

DType scratch_type(DType t) {
  if (t == DType::kF64 || t == DType::kI64) return t;
  return is_float(t) ? DType::kF32 : DType::kI32;
}

simt::Expr reduce_combine(ReduceKind kind, simt::Expr a, simt::Expr b) {
  switch (kind) {
    case ReduceKind::kSum: return simt::Expr::binary(BinaryOp::kAdd, std::move(a), std::move(b));
    case ReduceKind::kMax: return simt::Expr::call(Func::kMax, {std::move(a), std::move(b)});
    case ReduceKind::kMin: return simt::Expr::call(Func::kMin, {std::move(a), std::move(b)});
  }
  return a;
}

namespace {

simt::Expr identity(ReduceKind kind, DType t) {
  const bool f = is_float(t);
  switch (kind) {
    case ReduceKind::kSum:
      return f ? simt::Expr::float_const(0, t) : simt::Expr::int_const(0, t);
    case ReduceKind::kMax:
      return f ? simt::Expr::float_const(-std::numeric_limits<double>::infinity(), t)
               : simt::Expr::int_const(t == DType::kI64 ? std::numeric_limits<int64_t>::min()
                                                        : std::numeric_limits<int32_t>::min(), t);
    case ReduceKind::kMin:
      return f ? simt::Expr::float_const(std::numeric_limits<double>::infinity(), t)
               : simt::Expr::int_const(t == DType::kI64 ? std::numeric_limits<int64_t>::max()
                                                        : std::numeric_limits<int32_t>::max(), t);
  }
  return simt::Expr::int_const(0, t);
}

}  // namespace

uint32_t Lowerer::scratch(DType type, int64_t elements) {
  DType t = scratch_type(type);
  auto it = scratch_arrays_.find(t);
  if (it == scratch_arrays_.end()) {
    fn_.shared.push_back({absl::StrCat("scratch_", av(dtype_name(t))), t, 0});
    it = scratch_arrays_.emplace(t, static_cast<uint32_t>(fn_.shared.size() - 1)).first;
  }
  fn_.shared[it->second].count = std::max(fn_.shared[it->second].count, elements);
  return it->second;
}

// ---- gemm ----

absl::Status Lowerer::lower_gemm(const Stmt& s, const GemmOp& op) {
  if (storage_[op.c.buffer].kind == Storage::Kind::kMatrix) return lower_matrix_gemm(s, op);
  if (const StagedGemm* staged = staged_gemm(op)) return lower_staged_matrix_gemm(op, *staged);
  ASSIGN_OR_RETURN(std::vector<int64_t> a_shape, shape_of(op.a));
  ASSIGN_OR_RETURN(std::vector<int64_t> b_shape, shape_of(op.b));
  ASSIGN_OR_RETURN(std::vector<int64_t> c_shape, shape_of(op.c));
  if (a_shape.size() != 2 || b_shape.size() != 2 || c_shape.size() != 2)
    return unsupported(s, "a gemm whose operands are not two-dimensional");
  const int64_t m = c_shape[0], n = c_shape[1];
  const int64_t k = op.transpose_a ? a_shape[0] : a_shape[1];
  const Storage& a = storage_[op.a.buffer];
  const Storage& b = storage_[op.b.buffer];
  const Storage& c = storage_[op.c.buffer];
  const bool stage_a = a.kind == Storage::Kind::kDistributed;
  const bool stage_b = b.kind == Storage::Kind::kDistributed;
  const DType a_type = kernel_.symbol(op.a.buffer).dtype, b_type = kernel_.symbol(op.b.buffer).dtype;

  // Chunk of the k dimension that the staged operands' scratch can hold.
  int64_t chunk = k;
  if (stage_a || stage_b) {
    const int64_t per_k = (stage_a ? m * dtype_size(scratch_type(a_type)) : 0) +
                          (stage_b ? n * dtype_size(scratch_type(b_type)) : 0);
    chunk = std::min(k, scratch_budget_bytes_ / per_k);
    if (chunk < 1)
      return absl::ResourceExhaustedError(absl::StrCat(
          "kernel ", kernel_.name, ": gemm at line ", s.loc.line, " needs ", per_k,
          " bytes of shared scratch to stage its register operands, but only ", scratch_budget_bytes_,
          " bytes are left"));
  }
  uint32_t a_scratch = stage_a ? scratch(a_type, m * chunk + (stage_b && scratch_type(a_type) == scratch_type(b_type) ? chunk * n : 0)) : 0;
  uint32_t b_scratch = stage_b ? scratch(b_type, (stage_a && scratch_type(a_type) == scratch_type(b_type) ? m * chunk : 0) + chunk * n) : 0;
  const int64_t b_offset = stage_a && stage_b && a_scratch == b_scratch ? m * chunk : 0;

  // A(i, kk) and B(kk, j) as values; kc is the start of the staged chunk.
  auto read_a = [&](const simt::Expr& i, const simt::Expr& kk, const simt::Expr& kc) -> absl::StatusOr<simt::Expr> {
    if (stage_a)
      return simt::Expr::load(Space::kShared, a_scratch, fn_.shared[a_scratch].type,
                              add(mul(i, i32(chunk)), bin(BinaryOp::kSub, kk, kc)));
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at,
                     region_coords(op.a, op.transpose_a ? std::vector<simt::Expr>{kk, i} : std::vector<simt::Expr>{i, kk}));
    return read_element(op.a.buffer, at);
  };
  auto read_b = [&](const simt::Expr& kk, const simt::Expr& j, const simt::Expr& kc) -> absl::StatusOr<simt::Expr> {
    if (stage_b)
      return simt::Expr::load(Space::kShared, b_scratch, fn_.shared[b_scratch].type,
                              add(i32(b_offset), add(mul(bin(BinaryOp::kSub, kk, kc), i32(n)), j)));
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at,
                     region_coords(op.b, op.transpose_b ? std::vector<simt::Expr>{j, kk} : std::vector<simt::Expr>{kk, j}));
    return read_element(op.b.buffer, at);
  };

  const DType acc_type = scratch_type(kernel_.symbol(op.c.buffer).dtype);
  // Accumulates sum over kk in [kc, kend) of A(i, kk) * B(kk, j) into element (i, j) of C.
  auto accumulate = [&](const simt::Expr& kc, const simt::Expr& kend) -> absl::Status {
    auto element = [&](const simt::Expr& i, const simt::Expr& j, std::optional<simt::Expr> slot) -> absl::Status {
      uint32_t sum = new_var("sum", acc_type);
      if (slot) {
        assign(sum, simt::Expr::load(Space::kPrivate, c.id, kernel_.symbol(op.c.buffer).dtype, *slot));
      } else {
        ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.c, {i, j}));
        ASSIGN_OR_RETURN(simt::Expr old, read_element(op.c.buffer, at));
        assign(sum, old);
      }
      RETURN_IF_ERROR(for_range("kk", kc, kend, false, [&](const simt::Expr& kk) -> absl::Status {
        ASSIGN_OR_RETURN(simt::Expr av_, read_a(i, kk, kc));
        ASSIGN_OR_RETURN(simt::Expr bv, read_b(kk, j, kc));
        assign(sum, add(var(sum), mul(simt::Expr::cast(acc_type, av_), simt::Expr::cast(acc_type, bv))));
        return absl::OkStatus();
      }));
      if (slot) {
        assign_at(c.id, *slot, var(sum));
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.c, {i, j}));
      return write_element(op.c.buffer, at, var(sum));
    };
    if (c.kind == Storage::Kind::kDistributed) {
      // Registers: the k loop outside, every held element updated per step (one multiply-add
      // per slot in the unrolled body instead of one k loop per slot: far smaller code).
      const DType c_type = kernel_.symbol(op.c.buffer).dtype;
      return for_range("kk", kc, kend, false, [&](const simt::Expr& kk) {
        return for_owned(c, [&](const simt::Expr& slot, const std::vector<simt::Expr>& ij) -> absl::Status {
          ASSIGN_OR_RETURN(simt::Expr av_, read_a(ij[0], kk, kc));
          ASSIGN_OR_RETURN(simt::Expr bv, read_b(kk, ij[1], kc));
          simt::Expr old = simt::Expr::cast(acc_type, simt::Expr::load(Space::kPrivate, c.id, c_type, slot));
          assign_at(c.id, slot, add(old, mul(simt::Expr::cast(acc_type, av_), simt::Expr::cast(acc_type, bv))));
          return absl::OkStatus();
        });
      });
    }
    return for_cyclic({m, n}, /*unroll=*/false, [&](const std::vector<simt::Expr>& ij) { return element(ij[0], ij[1], std::nullopt); });
  };

  if (!stage_a && !stage_b) return accumulate(i32(0), i32(k));

  // Staged: each chunk of k is copied from the owners' registers into scratch, then used.
  auto stage = [&](const Storage& frag, bool transpose, bool is_a, const simt::Expr& kc,
                   const simt::Expr& kend, uint32_t arr) {
    return for_owned(frag, [&](const simt::Expr& slot, const std::vector<simt::Expr>& xy) -> absl::Status {
      // Logical coordinates: A(i, kk) or B(kk, j).
      simt::Expr first = transpose ? xy[1] : xy[0], second = transpose ? xy[0] : xy[1];
      simt::Expr kk = is_a ? second : first;
      simt::Expr in_chunk = bin(BinaryOp::kAnd, bin(BinaryOp::kGe, kk, kc), bin(BinaryOp::kLt, kk, kend));
      return if_then(in_chunk, [&] {
        simt::Expr at = is_a ? add(mul(first, i32(chunk)), bin(BinaryOp::kSub, kk, kc))
                             : add(i32(b_offset), add(mul(bin(BinaryOp::kSub, kk, kc), i32(n)), second));
        simt::Stmt st;
        st.kind = simt::StmtKind::kStore;
        st.space = Space::kShared;
        st.id = arr;
        st.operands = {at, simt::Expr::cast(fn_.shared[arr].type,
                                            simt::Expr::load(Space::kPrivate, frag.id,
                                                             kernel_.symbol(is_a ? op.a.buffer : op.b.buffer).dtype, slot))};
        emit(std::move(st));
        return absl::OkStatus();
      });
    });
  };
  const int64_t chunks = (k + chunk - 1) / chunk;
  return for_range("kc", i32(0), i32(chunks), false, [&](const simt::Expr& ci) -> absl::Status {
    uint32_t kc = new_var("kc", DType::kI32), kend = new_var("kend", DType::kI32);
    assign(kc, mul(ci, i32(chunk)));
    assign(kend, simt::Expr::call(Func::kMin, {add(var(kc), i32(chunk)), i32(k)}));
    barrier_now();  // the previous chunk's readers are done with the scratch
    if (stage_a) RETURN_IF_ERROR(stage(a, op.transpose_a, true, var(kc), var(kend), a_scratch));
    if (stage_b) RETURN_IF_ERROR(stage(b, op.transpose_b, false, var(kc), var(kend), b_scratch));
    barrier_now();
    return accumulate(var(kc), var(kend));
  });
}

// ---- reductions ----

// Along the rows of a distributed source (last dimension, the whole fragment) whose row length is
// a multiple of the target's one subgroup size and a multiple or divisor of the block's threads,
// with every slot full: element e sits on thread e % threads, so the sg lanes of a subgroup hold
// sg neighbouring elements of one row in every slot. A thread folds the slots it holds of one row
// (rows of whole rounds), a subgroup reduction combines the lanes, lane 0 stores the result as
// its subgroup's part of that row, and each output's owner combines the parts. This
// needs no per-thread array of partials over all outputs (indexed by a row that depends on the
// thread id, which GPUs keep in local memory) and one subgroup reduction per slot instead of one
// per output: attention's row max and row sum.
absl::StatusOr<bool> Lowerer::lower_reduce_rows_by_subgroups(const ReduceOp& op) {
  const Storage& src = storage_[op.src.buffer];
  const Storage& dst = storage_[op.dst.buffer];
  const int64_t sg = target_.min_subgroup_size();
  if (src.kind != Storage::Kind::kDistributed || !region_is_whole(kernel_, op.src) || src.shape.empty() ||
      op.dim != static_cast<int32_t>(src.shape.size()) - 1 || !target_.has(TargetFeature::kSubgroupArithmetic) ||
      sg <= 1 || sg != target_.max_subgroup_size() || kernel_.threads % sg != 0 || src.shape.back() % sg != 0 ||
      numel(src.shape) % kernel_.threads != 0)
    return false;
  const int64_t row = src.shape.back(), threads = kernel_.threads;
  if (row % threads != 0 && threads % row != 0) return false;
  if (dst.kind == Storage::Kind::kDistributed && !region_is_whole(kernel_, op.dst)) return false;
  const std::vector<int64_t> out_shape(src.shape.begin(), src.shape.end() - 1);
  const int64_t outputs = numel(out_shape), parts = (row % threads == 0 ? threads : row) / sg;
  const DType src_type = kernel_.symbol(op.src.buffer).dtype, t = scratch_type(src_type);
  if (outputs * parts * dtype_size(t) > scratch_budget_bytes_) return false;
  fn_.uses_subgroup_ops = true;
  const uint32_t sc = scratch(t, outputs * parts);
  const simt::Expr lane = simt::Expr::builtin(simt::Builtin::kSubgroupLane);
  auto store_part = [&](uint32_t r, simt::Expr at) {
    return if_then(bin(BinaryOp::kEq, lane, i32(0)), [&] {
      simt::Stmt st;
      st.kind = simt::StmtKind::kStore;
      st.space = Space::kShared;
      st.id = sc;
      st.operands = {std::move(at), var(r)};
      emit(std::move(st));
      return absl::OkStatus();
    });
  };
  auto element = [&](const simt::Expr& slot) {
    return simt::Expr::cast(t, simt::Expr::load(Space::kPrivate, src.id, src_type, slot));
  };
  barrier_now();  // earlier readers of the scratch are done
  if (row % threads == 0) {
    // Rows of whole rounds: row r is slots r q .. r q + q - 1 of every thread, folded in the
    // thread first; a subgroup's part of the row is its own columns.
    const int64_t q = row / threads;
    const bool unroll = target_.api != ApiKind::kSpirv;
    RETURN_IF_ERROR(for_range("r", i32(0), i32(outputs), unroll, [&](const simt::Expr& r) -> absl::Status {
      uint32_t v = new_var("fold", t);
      assign(v, element(mul(r, i32(q))));
      RETURN_IF_ERROR(for_range("q", i32(1), i32(q), unroll, [&](const simt::Expr& j) {
        assign(v, reduce_combine(op.kind, var(v), element(add(mul(r, i32(q)), j))));
        return absl::OkStatus();
      }));
      uint32_t red = new_var("sg", t);
      assign(red, simt::Expr::subgroup_reduce(op.kind, var(v)));
      return store_part(red, add(mul(r, i32(parts)), simt::Expr::builtin(simt::Builtin::kSubgroupId)));
    }));
  } else {
    // Rows shorter than a round: each slot holds one element of some row per thread.
    RETURN_IF_ERROR(for_owned(src, [&](const simt::Expr& slot, const std::vector<simt::Expr>& rel) -> absl::Status {
      uint32_t red = new_var("sg", t);
      assign(red, simt::Expr::subgroup_reduce(op.kind, element(slot)));
      const std::vector<simt::Expr> r(rel.begin(), rel.end() - 1);
      return store_part(red, add(mul(flat_index(r, out_shape), i32(parts)), bin(BinaryOp::kDiv, rel.back(), i32(sg))));
    }));
  }
  barrier_now();
  RETURN_IF_ERROR(combine_row_parts(op, sc, parts));
  return true;
}

absl::Status Lowerer::combine_row_parts(const ReduceOp& op, uint32_t sc, int64_t parts) {
  const Storage& dst = storage_[op.dst.buffer];
  const DType t = fn_.shared[sc].type;
  ASSIGN_OR_RETURN(std::vector<int64_t> src_shape, shape_of(op.src));
  const std::vector<int64_t> out_shape(src_shape.begin(), src_shape.end() - 1);
  // Output o: its row's parts, in order, then the old value when accumulating.
  auto combined = [&](const simt::Expr& o) {
    uint32_t acc = new_var("acc", t);
    assign(acc, simt::Expr::load(Space::kShared, sc, t, mul(o, i32(parts))));
    for (int64_t w = 1; w < parts; ++w)
      assign(acc, reduce_combine(op.kind, var(acc), simt::Expr::load(Space::kShared, sc, t, add(mul(o, i32(parts)), i32(w)))));
    return acc;
  };
  const DType dst_type = kernel_.symbol(op.dst.buffer).dtype;
  if (dst.kind == Storage::Kind::kDistributed) {
    return for_owned(dst, [&](const simt::Expr& slot, const std::vector<simt::Expr>& orel) -> absl::Status {
      uint32_t acc = combined(flat_index(orel, dst.shape));
      if (op.accumulate)
        assign(acc, reduce_combine(op.kind, var(acc), simt::Expr::load(Space::kPrivate, dst.id, dst_type, slot)));
      assign_at(dst.id, slot, var(acc));
      return absl::OkStatus();
    });
  }
  return for_cyclic(out_shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& orel) -> absl::Status {
    uint32_t acc = combined(flat_index(orel, out_shape));
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.dst, orel));
    if (op.accumulate) {
      ASSIGN_OR_RETURN(simt::Expr old, read_element(op.dst.buffer, at));
      assign(acc, reduce_combine(op.kind, var(acc), std::move(old)));
    }
    return write_element(op.dst.buffer, at, var(acc));
  });
}

absl::Status Lowerer::lower_reduce(const Stmt& s, const ReduceOp& op) {
  ASSIGN_OR_RETURN(std::vector<int64_t> src_shape, shape_of(op.src));
  if (op.dim < 0 || op.dim >= static_cast<int32_t>(src_shape.size()))
    return unsupported(s, "a reduction dimension outside the source's rank");
  std::vector<int64_t> out_shape = src_shape;
  out_shape.erase(out_shape.begin() + op.dim);
  const int64_t outputs = numel(out_shape);
  const int64_t threads = kernel_.threads;
  const DType src_type = kernel_.symbol(op.src.buffer).dtype;
  const DType t = scratch_type(src_type);
  const Storage& src = storage_[op.src.buffer];
  const Storage& dst = storage_[op.dst.buffer];
  if (outputs > 4096) return unsupported(s, "a reduction with more than 4096 outputs");
  if (src.kind == Storage::Kind::kMatrix) return lower_matrix_row_reduce(s, op);
  ASSIGN_OR_RETURN(bool by_rows, lower_reduce_rows_by_subgroups(op));
  if (by_rows) return absl::OkStatus();

  // 1. Per-thread partials over the elements this thread reads.
  uint32_t part = new_var("part", t, static_cast<int32_t>(outputs));
  RETURN_IF_ERROR(for_range("o", i32(0), i32(outputs), outputs <= 64, [&](const simt::Expr& o) {
    assign_at(part, o, identity(op.kind, t));
    return absl::OkStatus();
  }));
  auto out_index = [&](const std::vector<simt::Expr>& rel) {
    std::vector<simt::Expr> kept;
    for (size_t d = 0; d < rel.size(); ++d)
      if (static_cast<int32_t>(d) != op.dim) kept.push_back(rel[d]);
    return flat_index(kept, out_shape);
  };
  auto fold = [&](const std::vector<simt::Expr>& rel, simt::Expr v) {
    uint32_t o = new_var("o", DType::kI32);
    assign(o, out_index(rel));
    assign_at(part, var(o), reduce_combine(op.kind, simt::Expr::load(Space::kPrivate, part, t, var(o)),
                                    simt::Expr::cast(t, std::move(v))));
  };
  if (src.kind == Storage::Kind::kDistributed) {
    RETURN_IF_ERROR(for_owned(src, [&](const simt::Expr& slot, const std::vector<simt::Expr>& rel) {
      fold(rel, simt::Expr::load(Space::kPrivate, src.id, src_type, slot));
      return absl::OkStatus();
    }));
  } else {
    RETURN_IF_ERROR(for_cyclic(src_shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& rel) -> absl::Status {
      ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.src, rel));
      ASSIGN_OR_RETURN(simt::Expr v, read_element(op.src.buffer, at));
      fold(rel, std::move(v));
      return absl::OkStatus();
    }));
  }

  // 2. Combine across threads, a chunk of outputs at a time.
  // Subgroup reductions only where every subgroup is full (a partial last subgroup would reduce
  // over lanes that do not exist; PTX shuffles with a full mask).
  const bool subgroups = target_.has(TargetFeature::kSubgroupArithmetic) && target_.min_subgroup_size() > 1 &&
                         kernel_.threads % target_.max_subgroup_size() == 0;
  const int64_t width = subgroups ? (threads + target_.min_subgroup_size() - 1) / target_.min_subgroup_size() : threads;
  const int64_t bytes_per_output = width * dtype_size(t);
  const int64_t chunk = std::min(outputs, scratch_budget_bytes_ / bytes_per_output);
  if (chunk < 1)
    return absl::ResourceExhaustedError(absl::StrCat(
        "kernel ", kernel_.name, ": reduction at line ", s.loc.line, " needs ", bytes_per_output,
        " bytes of shared scratch, but only ", scratch_budget_bytes_, " bytes are left"));
  if (subgroups) fn_.uses_subgroup_ops = true;
  const uint32_t sc = scratch(t, chunk * width);
  const int64_t chunks = (outputs + chunk - 1) / chunk;
  return for_range("oc", i32(0), i32(chunks), false, [&](const simt::Expr& ci) -> absl::Status {
    uint32_t o0 = new_var("o0", DType::kI32), o1 = new_var("o1", DType::kI32);
    assign(o0, mul(ci, i32(chunk)));
    assign(o1, simt::Expr::call(Func::kMin, {add(var(o0), i32(chunk)), i32(outputs)}));
    barrier_now();  // earlier readers of the scratch are done
    RETURN_IF_ERROR(for_range("o", var(o0), var(o1), false, [&](const simt::Expr& o) -> absl::Status {
      simt::Expr row = mul(bin(BinaryOp::kSub, o, var(o0)), i32(width));
      simt::Expr v = simt::Expr::load(Space::kPrivate, part, t, o);
      simt::Stmt st;
      st.kind = simt::StmtKind::kStore;
      st.space = Space::kShared;
      st.id = sc;
      if (!subgroups) {
        st.operands = {add(row, tid()), v};
        emit(std::move(st));
        return absl::OkStatus();
      }
      uint32_t r = new_var("sg", t);
      assign(r, simt::Expr::subgroup_reduce(op.kind, v));
      st.operands = {add(row, simt::Expr::builtin(simt::Builtin::kSubgroupId)), var(r)};
      return if_then(bin(BinaryOp::kEq, simt::Expr::builtin(simt::Builtin::kSubgroupLane), i32(0)), [&] {
        emit(std::move(st));
        return absl::OkStatus();
      });
    }));
    barrier_now();
    // Output o is finished by thread o % threads (its owner when the destination is distributed).
    simt::Expr contributors =
        subgroups ? bin(BinaryOp::kDiv,
                        add(i32(threads), bin(BinaryOp::kSub, simt::Expr::builtin(simt::Builtin::kSubgroupSize), i32(1))),
                        simt::Expr::builtin(simt::Builtin::kSubgroupSize))
                  : i32(threads);
    return for_range("o", var(o0), var(o1), false, [&](const simt::Expr& o) -> absl::Status {
      return if_then(bin(BinaryOp::kEq, bin(BinaryOp::kMod, o, i32(threads)), tid()), [&]() -> absl::Status {
        uint32_t acc = new_var("acc", t);
        assign(acc, identity(op.kind, t));
        simt::Expr row = mul(bin(BinaryOp::kSub, o, var(o0)), i32(width));
        RETURN_IF_ERROR(for_range("w", i32(0), contributors, false, [&](const simt::Expr& w) {
          assign(acc, reduce_combine(op.kind, var(acc), simt::Expr::load(Space::kShared, sc, t, add(row, w))));
          return absl::OkStatus();
        }));
        if (dst.kind == Storage::Kind::kDistributed) {
          simt::Expr slot = bin(BinaryOp::kDiv, o, i32(threads));
          if (op.accumulate)
            assign(acc, reduce_combine(op.kind, var(acc),
                                simt::Expr::load(Space::kPrivate, dst.id, kernel_.symbol(op.dst.buffer).dtype, slot)));
          assign_at(dst.id, slot, var(acc));
          return absl::OkStatus();
        }
        ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.dst, unravel(o, out_shape)));
        if (op.accumulate) {
          ASSIGN_OR_RETURN(simt::Expr old, read_element(op.dst.buffer, at));
          assign(acc, reduce_combine(op.kind, var(acc), std::move(old)));
        }
        return write_element(op.dst.buffer, at, var(acc));
      });
    });
  });
}

}  // namespace tilert::lowering
