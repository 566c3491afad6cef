// Matrix accumulators worked on in the lane's own registers (targets with
// matrix_elements_addressable, mma plans): PTX holds a 16x16 accumulator in mma.m16n8k16's C
// layout, where lane L's element k lies at row L / 4 + 8 ((k / 2) % 2), column
// 8 (k / 4) + 2 (L % 4) + k % 2 (matrix_element_coords). So each lane can
//
//   * run a parallel body at its own elements (lower_copy.cc, lower_parallel_over_matrix),
//   * store its own elements into shared memory (a copy into a shared tile or a shared-backed
//     fragment, such as attention's probabilities), with no f32 staging tile between, and
//   * reduce along rows: a row's 16 columns of one accumulator lie in the 4 lanes of a quad
//     (lanes 4 g .. 4 g + 3 hold row g and row g + 8), 4 elements each. A lane folds its
//     elements of a row over all the subgroup's accumulators of that row, a subgroup reduction
//     over clusters of 4 lanes (two butterfly exchanges on PTX) combines the quad, and the
//     quad's first lane delivers the subgroup's result for the row. When the plan keeps every row
//     in one subgroup (warps_n = 1) and the destination is in shared memory, that result is the
//     row's and is written in place; otherwise each subgroup's part goes to shared scratch and
//     the output's owner combines the parts (combine_row_parts, as for distributed sources).
//     Into a matrix row vector (a value per row, kept by the lanes that hold the row:
//     for_matrix_rows), every lane of the quad keeps the result in its own register.
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

// Lanes that hold one row of an accumulator: those with the same L / 4 (row_of_group is 1).
constexpr int kQuadLanes = 4;

}  // namespace

absl::Status Lowerer::for_matrix_elements(const Storage& m, const MatrixElementFn& fn) {
  const MatrixGemmPlan& p = m.plan;
  if (!matrix_elements_addressable(target_))
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": the elements of a matrix accumulator on ",
                                            target_.name(), " are not the lane's to address"));
  RETURN_IF_ERROR(finish_warpgroup_products());  // a warpgroup product may still be writing them
  const MatrixOrigin origin = subgroup_origin(p, simt::Expr::builtin(simt::Builtin::kSubgroupId));
  uint32_t group = new_var("lane_group", DType::kI32), quad = new_var("lane_quad", DType::kI32);
  {
    const simt::Expr lane = simt::Expr::builtin(simt::Builtin::kSubgroupLane);
    assign(group, bin(BinaryOp::kDiv, lane, i32(kQuadLanes)));
    assign(quad, bin(BinaryOp::kMod, lane, i32(kQuadLanes)));
  }
  for (int ti = 0; ti < p.tiles_m; ++ti)
    for (int tj = 0; tj < p.tiles_n; ++tj)
      for (int k = 0; k < kMatrixAccumulatorElements; ++k) {
        const MatrixElementCoords c = matrix_element_coords(k);
        simt::Expr row = add(origin.row, add(i32(int64_t{ti} * origin.row_step + c.row_offset),
                                             mul(var(group), i32(c.row_of_group))));
        simt::Expr col = add(origin.col, add(i32(int64_t{tj} * kMatrixTile + c.col_offset),
                                             mul(var(quad), i32(c.col_of_quad))));
        RETURN_IF_ERROR(fn(m.matrices[static_cast<size_t>(ti) * p.tiles_n + tj], k, 2 * ti + c.row_offset / 8, row, col));
      }
  return absl::OkStatus();
}

bool Lowerer::copies_matrix_elements(const Storage& /*from*/, const Storage& to) const {
  return to.kind == Storage::Kind::kShared && matrix_elements_addressable(target_);
}

absl::Status Lowerer::lower_matrix_copy_elements(const Storage& from, const Region& dst) {
  return for_matrix_elements(from, [&](uint32_t m, int k, int, const simt::Expr& row, const simt::Expr& col) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(dst, {row, col}));
    return write_element(dst.buffer, at, simt::Expr::matrix_element(m, k));
  });
}

absl::Status Lowerer::for_matrix_rows(const MatrixGemmPlan& p,
                                     const std::function<absl::Status(int slot, const simt::Expr& row)>& fn) {
  if (row_sharers(p) != 1)
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": matrix row vectors of a plan without whole rows"));
  const MatrixOrigin origin = subgroup_origin(p, simt::Expr::builtin(simt::Builtin::kSubgroupId));
  uint32_t group = new_var("lane_group", DType::kI32);
  assign(group, bin(BinaryOp::kDiv, simt::Expr::builtin(simt::Builtin::kSubgroupLane), i32(kQuadLanes)));
  for (int ti = 0; ti < p.tiles_m; ++ti)
    for (int h = 0; h < 2; ++h)
      RETURN_IF_ERROR(fn(2 * ti + h, add(origin.row, add(i32(int64_t{ti} * origin.row_step + 8 * h), var(group)))));
  return absl::OkStatus();
}

absl::Status Lowerer::lower_row_vector_fill(const Storage& v, const simt::Expr& value) {
  for (int slot = 0; slot < v.slots; ++slot) assign_at(v.id, i32(slot), value);
  return absl::OkStatus();
}

absl::Status Lowerer::lower_row_vector_copy(const Region& src, const Region& dst) {
  const Storage& from = storage_[src.buffer];
  const Storage& to = storage_[dst.buffer];
  const DType t = kernel_.symbol(src.buffer).dtype;
  if (from.kind == Storage::Kind::kMatrixRows && to.kind == Storage::Kind::kMatrixRows) {
    for (int slot = 0; slot < to.slots; ++slot)
      assign_at(to.id, i32(slot), simt::Expr::load(Space::kPrivate, from.id, t, i32(slot)));
    return absl::OkStatus();
  }
  if (from.kind == Storage::Kind::kMatrixRows) {
    // The 4 lanes of a quad hold the same rows: the first one stores them.
    uint32_t first_in_quad = new_var("quad_first", DType::kBool);
    assign(first_in_quad, bin(BinaryOp::kEq, bin(BinaryOp::kMod, simt::Expr::builtin(simt::Builtin::kSubgroupLane),
                                                 i32(kQuadLanes)), i32(0)));
    return for_matrix_rows(from.plan, [&](int slot, const simt::Expr& row) -> absl::Status {
      return if_then(var(first_in_quad), [&]() -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(dst, {row}));
        return write_element(dst.buffer, at, simt::Expr::load(Space::kPrivate, from.id, t, i32(slot)));
      });
    });
  }
  return for_matrix_rows(to.plan, [&](int slot, const simt::Expr& row) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(src, {row}));
    ASSIGN_OR_RETURN(simt::Expr value, read_element(src.buffer, at));
    assign_at(to.id, i32(slot), std::move(value));
    return absl::OkStatus();
  });
}

absl::Status Lowerer::lower_matrix_row_reduce(const Stmt& s, const ReduceOp& op) {
  const Storage& src = storage_[op.src.buffer];
  const Storage& dst = storage_[op.dst.buffer];
  const MatrixGemmPlan& p = src.plan;
  if (src.shape.size() != 2 || op.dim != 1 || !matrix_elements_addressable(target_) ||
      !target_.has(TargetFeature::kSubgroupClustered))
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": matrix accumulator ",
                                            kernel_.symbol(op.src.buffer).name,
                                            " reduced other than along its rows in the lane's registers"));
  if (dst.kind == Storage::Kind::kDistributed && !region_is_whole(kernel_, op.dst))
    return unsupported(s, "a row reduction of a matrix accumulator into part of a distributed fragment");
  fn_.uses_subgroup_ops = true;
  const DType t = DType::kF32;
  const int64_t rows = src.shape[0];
  // A matrix row vector of the same rows: every lane of the quad keeps the result.
  const bool in_registers = dst.kind == Storage::Kind::kMatrixRows;
  if (in_registers && !same_rows(dst.plan, p))
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": row vector ", kernel_.symbol(op.dst.buffer).name,
                                            " of other rows than the accumulator reduced into it"));
  RETURN_IF_ERROR(finish_warpgroup_products());  // a warpgroup product may still be writing src
  // Every row in one subgroup and a destination every lane can write: no parts to combine.
  const int sharers = row_sharers(p);
  const bool in_place = in_registers || (sharers == 1 && dst.kind == Storage::Kind::kShared);
  uint32_t parts = 0;
  if (!in_place) {
    const int64_t bytes = rows * sharers * dtype_size(t);
    if (bytes > scratch_budget_bytes_)
      return absl::ResourceExhaustedError(absl::StrCat("kernel ", kernel_.name, ": reduction at line ", s.loc.line,
                                                       " needs ", bytes, " bytes of shared scratch, but only ",
                                                       scratch_budget_bytes_, " bytes are left"));
    parts = scratch(t, rows * sharers);
    barrier_now();  // earlier readers of the scratch are done
  }
  const simt::Expr sg = simt::Expr::builtin(simt::Builtin::kSubgroupId);
  const MatrixOrigin origin = subgroup_origin(p, sg);
  // Which of the row's sharers this subgroup is: its column part (matrix_origin's order).
  simt::Expr part = p.warpgroup ? bin(BinaryOp::kMod, bin(BinaryOp::kDiv, sg, i32(kWarpgroupThreads / p.subgroup_size)),
                                      i32(p.groups_n))
                                : bin(BinaryOp::kMod, sg, i32(p.warps_n));
  const simt::Expr lane = simt::Expr::builtin(simt::Builtin::kSubgroupLane);
  uint32_t group = new_var("lane_group", DType::kI32), first_in_quad = new_var("quad_first", DType::kBool);
  assign(group, bin(BinaryOp::kDiv, lane, i32(kQuadLanes)));
  assign(first_in_quad, bin(BinaryOp::kEq, bin(BinaryOp::kMod, lane, i32(kQuadLanes)), i32(0)));
  for (int ti = 0; ti < p.tiles_m; ++ti)
    for (int row_offset : {0, 8}) {  // the lane's two rows of each accumulator row strip
      std::optional<uint32_t> fold;
      for (int tj = 0; tj < p.tiles_n; ++tj)
        for (int k = 0; k < kMatrixAccumulatorElements; ++k) {
          if (matrix_element_coords(k).row_offset != row_offset) continue;
          simt::Expr e = simt::Expr::matrix_element(src.matrices[static_cast<size_t>(ti) * p.tiles_n + tj], k);
          if (!fold) {
            fold = new_var("fold", t);
            assign(*fold, std::move(e));
          } else {
            assign(*fold, reduce_combine(op.kind, var(*fold), std::move(e)));
          }
        }
      uint32_t reduced = new_var("row_part", t);
      assign(reduced, simt::Expr::subgroup_reduce(op.kind, var(*fold), kQuadLanes));
      if (in_registers) {
        const simt::Expr slot = i32(2 * ti + row_offset / 8);
        simt::Expr value = var(reduced);
        if (op.accumulate)
          value = reduce_combine(op.kind, std::move(value), simt::Expr::load(Space::kPrivate, dst.id, t, slot));
        assign_at(dst.id, slot, std::move(value));
        continue;
      }
      simt::Expr row = add(origin.row, add(i32(int64_t{ti} * origin.row_step + row_offset), var(group)));
      RETURN_IF_ERROR(if_then(var(first_in_quad), [&]() -> absl::Status {
        if (!in_place) {
          simt::Stmt st;
          st.kind = simt::StmtKind::kStore;
          st.space = Space::kShared;
          st.id = parts;
          st.operands = {add(mul(row, i32(sharers)), part), var(reduced)};
          emit(std::move(st));
          return absl::OkStatus();
        }
        ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.dst, {row}));
        simt::Expr value = var(reduced);
        if (op.accumulate) {
          ASSIGN_OR_RETURN(simt::Expr old, read_element(op.dst.buffer, at));
          value = reduce_combine(op.kind, std::move(value), simt::Expr::cast(t, std::move(old)));
        }
        return write_element(op.dst.buffer, at, std::move(value));
      }));
    }
  if (in_place) return absl::OkStatus();
  barrier_now();  // every subgroup's parts are in the scratch
  return combine_row_parts(op, parts, sharers);
}

}  // namespace tilert::lowering
