// Matrix accumulators (FragmentLayout::kMatrix): the gemm runs on the target's matrix unit. Each
// subgroup owns a tiles_m x tiles_n block of 16x16 accumulator matrices of the C tile (subgroup
// g takes block row g / warps_n, block column g % warps_n); per k step of 16 it loads its A row
// strip and B column strip from shared memory into matrix registers and multiplies. Warpgroup
// plans (wgmma) instead issue one warpgroup_mma per 64-row strip and k step, reading both
// operands from shared memory directly; matrix_origin places their accumulators. Matrix ids are
// statement fields, so every loop over tiles is unrolled here; only the k loop is a SIMT loop.
// Copying an accumulator out goes through a per-subgroup 16x16 f32 staging area in shared memory
// (the matrix layout is the emitter's), ordered by subgroup barriers only.
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

constexpr int kTile = kMatrixTile;
constexpr int kTileElements = kTile * kTile;

}  // namespace

void Lowerer::declare_matrix_accumulator(const Symbol& sym, Storage& st, const MatrixGemmPlan& plan) {
  st.kind = Storage::Kind::kMatrix;
  st.plan = plan;
  for (int i = 0; i < plan.tiles_m; ++i)
    for (int j = 0; j < plan.tiles_n; ++j) {
      st.matrices.push_back(static_cast<uint32_t>(fn_.matrices.size()));
      fn_.matrices.push_back({absl::StrCat(sym.name, "_", i, "_", j), simt::MatrixUse::kAccumulator, DType::kF32,
                              kTile, kTile});
    }
}

void Lowerer::declare_matrix_operand(const Symbol& sym, Storage& st, const MatrixGemmPlan& plan) {
  st.kind = Storage::Kind::kMatrixOperand;
  st.plan = plan;
  for (int i = 0; i < plan.tiles_m; ++i)
    for (int j = 0; j < plan.tiles_n; ++j) {
      st.matrices.push_back(static_cast<uint32_t>(fn_.matrices.size()));
      fn_.matrices.push_back({absl::StrCat(sym.name, "_", i, "_", j), simt::MatrixUse::kA, sym.dtype, kTile, kTile});
    }
}

absl::Status Lowerer::lower_matrix_convert(const Storage& from, const Storage& to) {
  if (!same_rows(from.plan, to.plan) || from.matrices.size() != to.matrices.size())
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": register operands converted from an "
                                            "accumulator of another layout"));
  RETURN_IF_ERROR(finish_warpgroup_products());  // a warpgroup product may still be writing `from`
  for (size_t i = 0; i < to.matrices.size(); ++i) {
    simt::Stmt st;
    st.kind = simt::StmtKind::kMatrixConvert;
    st.id = to.matrices[i];
    st.a = from.matrices[i];
    emit(std::move(st));
  }
  return absl::OkStatus();
}

absl::Status Lowerer::lower_matrix_fill(const Storage& acc, simt::Expr value) {
  RETURN_IF_ERROR(finish_warpgroup_products());
  for (uint32_t m : acc.matrices) {
    simt::Stmt st;
    st.kind = simt::StmtKind::kMatrixFill;
    st.id = m;
    st.operands.push_back(simt::Expr::cast(DType::kF32, value));
    emit(std::move(st));
  }
  return absl::OkStatus();
}

Lowerer::MatrixOrigin Lowerer::matrix_origin(const MatrixGemmPlan& p, const simt::Expr& sg) {
  MatrixOrigin o;
  if (p.warpgroup) {
    const int per_group = kWarpgroupThreads / p.subgroup_size;
    simt::Expr group = bin(BinaryOp::kDiv, sg, i32(per_group)), warp = bin(BinaryOp::kMod, sg, i32(per_group));
    o.row = add(mul(bin(BinaryOp::kDiv, group, i32(p.groups_n)), i32(int64_t{p.tiles_m} * kWarpgroupRows)),
                mul(warp, i32(kTile)));
    o.col = mul(bin(BinaryOp::kMod, group, i32(p.groups_n)), i32(int64_t{p.tiles_n} * kTile));
    o.row_step = kWarpgroupRows;
    return o;
  }
  o.row = mul(bin(BinaryOp::kDiv, sg, i32(p.warps_n)), i32(int64_t{p.tiles_m} * kTile));
  o.col = mul(bin(BinaryOp::kMod, sg, i32(p.warps_n)), i32(int64_t{p.tiles_n} * kTile));
  o.row_step = kTile;
  return o;
}

Lowerer::MatrixOrigin Lowerer::subgroup_origin(const MatrixGemmPlan& p, const simt::Expr& sg) {
  MatrixOrigin o = matrix_origin(p, sg);
  uint32_t row0 = new_var("sg_row", DType::kI32), col0 = new_var("sg_col", DType::kI32);
  assign(row0, std::move(o.row));
  assign(col0, std::move(o.col));
  o.row = var(row0);
  o.col = var(col0);
  return o;
}

// One warpgroup_mma per strip and k step of 16, all in one commit group. Usually the group is
// waited for at the end, so the operand tiles and the accumulators are free again when the gemm
// ends; in a pipeline with a spare buffer (defer_warpgroup_wait_) only the group before it is,
// and the first statement to touch accumulator elements or to branch waits for the rest
// (finish_warpgroup_products). A is a swizzled shared tile or register operand matrices (the
// subgroup's 16 rows of each k step: wgmma's register A fragment is mma.m16n8k16's); B is a
// swizzled shared tile read N-major, or K-major when transposed.
absl::Status Lowerer::lower_warpgroup_gemm(const GemmOp& op, const Storage& a, const Storage& b, const Storage& c) {
  const MatrixGemmPlan& p = c.plan;
  const bool a_registers = a.kind == Storage::Kind::kMatrixOperand;
  if ((!a_registers && !a.swizzled) || !b.swizzled)
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": warpgroup gemm operands are not stored "
                                            "swizzled"));
  // The warpgroup's first row and column: its warp 0's accumulator origin.
  const int per_group = kWarpgroupThreads / p.subgroup_size;
  uint32_t row0 = new_var("wg_row", DType::kI32), col0 = new_var("wg_col", DType::kI32);
  {
    MatrixOrigin o = matrix_origin(p, mul(bin(BinaryOp::kDiv, simt::Expr::builtin(simt::Builtin::kSubgroupId),
                                              i32(per_group)), i32(per_group)));
    assign(row0, std::move(o.row));
    assign(col0, std::move(o.col));
  }
  // Descriptor strides (PTX ISA, "Matrix Descriptor Format", swizzled layouts). K-major (A, and
  // B transposed: stored n x k): the stride byte offset is that of 8 rows (one pattern), the
  // leading one unused (16). N-major B: the leading byte offset steps from one swizzled column
  // block to the next (its rows times the swizzle width), the stride byte offset from 8 k rows
  // to the next 8.
  const int64_t b_rows = b.shape[b.shape.size() - 2];
  const bool b_k_major = op.transpose_b;
  const int64_t a_lbo = a_registers ? 0 : 16, a_sbo = a_registers ? 0 : 8 * a.swizzle;
  const int64_t b_lbo = b_k_major ? 16 : b_rows * b.swizzle, b_sbo = 8 * b.swizzle;
  // The swizzled layout is linear at the starts of 8-row patterns and swizzled rows (where the
  // chunk permutation is the identity): the warpgroup's first A row and B column are placed once,
  // each strip and k step adds a constant.
  auto origin = [&](const Region& r, const Storage& st, simt::Expr row, simt::Expr col) -> absl::StatusOr<uint32_t> {
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(r, {std::move(row), std::move(col)}));
    uint32_t v = new_var("wg_operand", DType::kI32);
    assign(v, shared_index(st, at));
    return v;
  };
  auto delta = [&](const Storage& st, simt::Expr row, simt::Expr col) {
    std::vector<simt::Expr> at(st.shape.size(), i32(0));
    at[at.size() - 2] = std::move(row);
    at.back() = std::move(col);
    return tile_offset(st, at);  // a constant once the k loop is unrolled
  };
  std::optional<uint32_t> a0;
  if (!a_registers) {
    ASSIGN_OR_RETURN(a0, origin(op.a, a, var(row0), i32(0)));
  }
  ASSIGN_OR_RETURN(uint32_t b0, b_k_major ? origin(op.b, b, var(col0), i32(0)) : origin(op.b, b, i32(0), var(col0)));
  // A product still in flight from an earlier gemm may stay so: products into the same
  // accumulators chain in issue order; the fence orders this thread's own register writes
  // (accumulators and register A operands alike).
  simt::Stmt fence;
  fence.kind = simt::StmtKind::kWarpgroupFence;
  emit(std::move(fence));
  auto products = [&](const simt::Expr& kk, int step) -> absl::Status {
    simt::Expr k0 = mul(kk, i32(kTile));
    for (int i = 0; i < p.tiles_m; ++i) {
      simt::Stmt m;
      m.kind = simt::StmtKind::kWarpgroupMma;
      m.id = c.matrices[static_cast<size_t>(i) * p.tiles_n];
      m.a = static_cast<uint32_t>(p.tiles_n);
      m.b = b.id;
      // One by one, not `= {...}`: the offsets are trees over kk, which a braced list would copy.
      if (a_registers) {
        m.space = Space::kPrivate;
        m.array = a.matrices[static_cast<size_t>(i) * p.k_steps + static_cast<size_t>(step)];
        m.operands.push_back(i32(0));
      } else {
        m.space = Space::kShared;
        m.array = a.id;
        m.operands.push_back(add(var(*a0), delta(a, i32(int64_t{i} * kWarpgroupRows), k0)));
      }
      m.operands.push_back(i32(a_lbo));
      m.operands.push_back(i32(a_sbo));
      m.operands.push_back(add(var(b0), b_k_major ? delta(b, i32(0), k0) : delta(b, k0, i32(0))));
      for (int64_t field : {b_lbo, b_sbo, a_registers ? int64_t{0} : a.swizzle, b.swizzle, int64_t{b_k_major}})
        m.operands.push_back(i32(field));
      emit(std::move(m));
    }
    return absl::OkStatus();
  };
  // Matrix ids are statement fields: with A in registers the k loop is unrolled here.
  if (a_registers) {
    for (int step = 0; step < p.k_steps; ++step) RETURN_IF_ERROR(products(i32(step), step));
  } else {
    RETURN_IF_ERROR(for_range("kk", i32(0), i32(p.k_steps), /*unroll=*/true,
                              [&](const simt::Expr& kk) -> absl::Status { return products(kk, 0); }));
  }
  simt::Stmt commit;
  commit.kind = simt::StmtKind::kWarpgroupCommit;
  emit(std::move(commit));
  // Inside a pipeline that keeps a buffer for it, the product stays in flight while the next
  // iteration's copies are issued (lower_pipelined); elsewhere it completes here.
  simt::Stmt wait;
  wait.kind = simt::StmtKind::kWarpgroupWait;
  wait.a = defer_warpgroup_wait_ ? 1 : 0;
  emit(std::move(wait));
  warpgroup_pending_ = defer_warpgroup_wait_;
  return absl::OkStatus();
}

absl::Status Lowerer::finish_warpgroup_products() {
  if (!warpgroup_pending_) return absl::OkStatus();
  simt::Stmt wait;
  wait.kind = simt::StmtKind::kWarpgroupWait;
  wait.a = 0;
  emit(std::move(wait));
  warpgroup_pending_ = false;
  return absl::OkStatus();
}

absl::Status Lowerer::lower_matrix_gemm(const Stmt& s, const GemmOp& op) {
  const Storage& c = storage_[op.c.buffer];
  const MatrixGemmPlan& p = c.plan;
  fn_.uses_subgroup_ops = true;
  const Storage& a = storage_[op.a.buffer];
  const Storage& b = storage_[op.b.buffer];
  const bool a_in_registers = a.kind == Storage::Kind::kMatrixOperand && !op.transpose_a;
  if ((a.kind != Storage::Kind::kShared && !a_in_registers) || b.kind != Storage::Kind::kShared)
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": matrix gemm at line ", s.loc.line,
                                            " with operands outside shared memory"));
  // The layout inference gave the operand's source and this gemm the same rows per subgroup.
  if (a_in_registers && (!same_rows(a.plan, p) || a.plan.tiles_n != p.k_steps))
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": register operand of the gemm at line ",
                                            s.loc.line, " in another layout"));
  if (p.warpgroup) return lower_warpgroup_gemm(op, a, b, c);
  uint32_t sg = new_var("sg", DType::kI32);
  assign(sg, simt::Expr::builtin(simt::Builtin::kSubgroupId));
  const MatrixOrigin o = subgroup_origin(p, var(sg));
  MatrixSource a_src;
  if (a_in_registers) {
    a_src.registers = &a.matrices;
  } else {
    a_src = shared_operand(op.a, a, op.transpose_a);
  }
  return emit_matrix_products(p, a_src, shared_operand(op.b, b, op.transpose_b), c.matrices, o.row, o.col);
}

Lowerer::MatrixSource Lowerer::shared_operand(const Region& r, const Storage& st, bool transposed) {
  MatrixSource src;
  src.array = st.id;
  src.stride = st.padded_shape().back();
  src.column_major = transposed;
  src.at = [this, &r, &st, transposed](simt::Expr row, simt::Expr col) -> absl::StatusOr<simt::Expr> {
    std::vector<simt::Expr> rel = transposed ? std::vector<simt::Expr>{std::move(col), std::move(row)}
                                             : std::vector<simt::Expr>{std::move(row), std::move(col)};
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(r, rel));
    return shared_index(st, at);
  };
  return src;
}

absl::Status Lowerer::emit_matrix_products(const MatrixGemmPlan& p, const MatrixSource& a, const MatrixSource& b,
                                           const std::vector<uint32_t>& accumulators, const simt::Expr& row0,
                                           const simt::Expr& col0) {
  // The operand matrices of this gemm: a strip of A tiles and of B tiles per k step (A from
  // registers: the operand's own matrices).
  std::vector<uint32_t> a_tiles, b_tiles;
  if (!a.registers)
    for (int i = 0; i < p.tiles_m; ++i) {
      a_tiles.push_back(static_cast<uint32_t>(fn_.matrices.size()));
      fn_.matrices.push_back({absl::StrCat("mma_a", temp_counter_, "_", i), simt::MatrixUse::kA, p.input, kTile, kTile});
    }
  for (int j = 0; j < p.tiles_n; ++j) {
    b_tiles.push_back(static_cast<uint32_t>(fn_.matrices.size()));
    fn_.matrices.push_back({absl::StrCat("mma_b", temp_counter_, "_", j), simt::MatrixUse::kB, p.input, kTile, kTile});
  }
  ++temp_counter_;
  auto load = [&](uint32_t matrix, const MatrixSource& src, simt::Expr at) {
    simt::Stmt l;
    l.kind = simt::StmtKind::kMatrixLoad;
    l.id = matrix;
    l.space = Space::kShared;
    l.array = src.array;
    l.a = src.column_major ? 1 : 0;
    l.operands = {std::move(at), i32(src.stride)};
    emit(std::move(l));
  };
  // One k step; `step` is its index when known here (A in registers names a matrix per step).
  auto products = [&](const simt::Expr& kk, int step) -> absl::Status {
    simt::Expr k0 = mul(kk, i32(kTile));
    for (int i = 0; i < p.tiles_m && !a.registers; ++i) {
      ASSIGN_OR_RETURN(simt::Expr at, a.at(add(row0, i32(i * kTile)), k0));
      load(a_tiles[i], a, std::move(at));
    }
    for (int j = 0; j < p.tiles_n; ++j) {
      ASSIGN_OR_RETURN(simt::Expr at, b.at(k0, add(col0, i32(j * kTile))));
      load(b_tiles[j], b, std::move(at));
    }
    for (int i = 0; i < p.tiles_m; ++i)
      for (int j = 0; j < p.tiles_n; ++j) {
        simt::Stmt m;
        m.kind = simt::StmtKind::kMatrixMulAdd;
        m.id = accumulators[i * p.tiles_n + j];
        m.a = a.registers ? (*a.registers)[static_cast<size_t>(i) * p.k_steps + step] : a_tiles[i];
        m.b = b_tiles[j];
        emit(std::move(m));
      }
    return absl::OkStatus();
  };
  // Matrix ids are statement fields: with A in registers the k loop is unrolled here.
  if (a.registers) {
    for (int step = 0; step < p.k_steps; ++step) RETURN_IF_ERROR(products(i32(step), step));
    return absl::OkStatus();
  }
  // PTX and AMDGCN want constant offsets where they can have them; SPIR-V keeps loops.
  const bool unroll = target_.api != ApiKind::kSpirv;
  return for_range("kk", i32(0), i32(p.k_steps), unroll,
                   [&](const simt::Expr& kk) -> absl::Status { return products(kk, 0); });
}

absl::Status Lowerer::lower_matrix_copy_out(const Storage& acc, const Region& dst) {
  RETURN_IF_ERROR(finish_warpgroup_products());
  const MatrixGemmPlan& p = acc.plan;
  fn_.uses_subgroup_ops = true;
  if (!matrix_out_) {
    matrix_out_ = static_cast<uint32_t>(fn_.shared.size());
    fn_.shared.push_back({"matrix_out", DType::kF32, int64_t{kTileElements} * (kernel_.threads / p.subgroup_size)});
  }
  const uint32_t staging = *matrix_out_;
  uint32_t sg = new_var("sg", DType::kI32), base = new_var("sg_stage", DType::kI32);
  assign(sg, simt::Expr::builtin(simt::Builtin::kSubgroupId));
  assign(base, mul(var(sg), i32(kTileElements)));
  const MatrixOrigin origin = subgroup_origin(p, var(sg));
  auto subgroup_barrier = [&] {
    simt::Stmt b;
    b.kind = simt::StmtKind::kBarrier;
    b.barrier = simt::BarrierKind::kSubgroup;
    emit(std::move(b));
  };
  for (int i = 0; i < p.tiles_m; ++i)
    for (int j = 0; j < p.tiles_n; ++j) {
      simt::Stmt st;
      st.kind = simt::StmtKind::kMatrixStore;
      st.id = acc.matrices[i * p.tiles_n + j];
      st.space = Space::kShared;
      st.array = staging;
      // The offset as an expression of the subgroup id (not the variable) lets an emitter see
      // that it is even and store pairs.
      st.operands = {mul(simt::Expr::builtin(simt::Builtin::kSubgroupId), i32(kTileElements)), i32(kTile)};
      emit(std::move(st));
      subgroup_barrier();  // the staged tile is visible to every lane
      // Lane l moves elements l, l + subgroup, ...: each row of 16 goes out contiguously. A loop
      // on every target: it runs once per tile, and unrolled it would be most of the kernel's code.
      RETURN_IF_ERROR(for_range("e", i32(0), i32(kTileElements / p.subgroup_size), /*unroll=*/false,
                                [&](const simt::Expr& e) -> absl::Status {
        uint32_t idx = new_var("idx", DType::kI32);
        assign(idx, add(simt::Expr::builtin(simt::Builtin::kSubgroupLane), mul(e, i32(p.subgroup_size))));
        simt::Expr r = add(origin.row, add(i32(i * origin.row_step), bin(BinaryOp::kDiv, var(idx), i32(kTile))));
        simt::Expr col = add(origin.col, add(i32(j * kTile), bin(BinaryOp::kMod, var(idx), i32(kTile))));
        std::vector<simt::Expr> rel;  // moved in: a braced list would copy both coordinates
        rel.push_back(std::move(r));
        rel.push_back(std::move(col));
        ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(dst, rel));
        for (simt::Expr& c : at) {  // each coordinate once: the bounds test and the address use it
          uint32_t v = new_var("at", DType::kI32);
          assign(v, std::move(c));
          c = var(v);
        }
        return write_element(dst.buffer, at,
                             simt::Expr::load(Space::kShared, staging, DType::kF32, add(var(base), var(idx))));
      }));
      subgroup_barrier();  // every lane has read the tile before the next is staged
    }
  return absl::OkStatus();
}

}  // namespace tilert::lowering
