#include "lowering/matrix_plan.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::lowering {
namespace {

bool has_shape(const TargetDescription& target, DType input, bool (*fits)(const MatrixShape&)) {
  for (const MatrixShape& s : target.matrix_shapes)
    if (s.input == input && s.accumulator == DType::kF32 && fits(s)) return true;
  return false;
}

// Whether `r` covers its tile's trailing two dimensions with every leading dimension an index,
// the column start a constant multiple of 8 and rows 8-element aligned (ldmatrix and cooperative
// matrix loads want 16-byte aligned rows), or, with `stage_fragments`, is a whole 2-D fragment.
// Fills `why` otherwise.
bool matrix_operand_region(const Kernel& kernel, const Region& r, bool stage_fragments, std::string* why) {
  const Symbol& sym = kernel.symbol(r.buffer);
  const size_t rank = sym.shape.size();
  if (sym.kind == SymbolKind::kFragment && stage_fragments) {
    // Copied into a staging tile of the lowering's own layout: any whole 2-D fragment will do.
    if (rank != 2 || !region_is_whole(kernel, r)) {
      *why = absl::StrCat("the operand fragment ", sym.name, " is not used whole and two-dimensional");
      return false;
    }
    return true;
  }
  if (sym.kind != SymbolKind::kShared) {
    *why = absl::StrCat(sym.name, " is not a shared tile");
    return false;
  }
  if (rank < 2) {
    *why = absl::StrCat(sym.name, " has fewer than two dimensions");
    return false;
  }
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    const Range& range = r.ranges[d];
    if (d + 2 < rank) {
      if (!range.index) {
        *why = absl::StrCat("the region of ", sym.name, " is not its trailing two dimensions");
        return false;
      }
      continue;
    }
    if (range.index) {
      *why = absl::StrCat("the region of ", sym.name, " indexes one of its trailing two dimensions");
      return false;
    }
    if (d + 1 == rank) {
      std::optional<int64_t> start = const_int_value(range.start);
      if (!start || *start % 8 != 0) {
        *why = absl::StrCat("the column start of ", sym.name, "'s region is not a constant multiple of 8");
        return false;
      }
    }
  }
  std::optional<int64_t> row = const_int_value(sym.shape[rank - 1]);
  if (!row || *row % 8 != 0) {
    *why = absl::StrCat(sym.name, "'s rows are not a multiple of 8 elements");
    return false;
  }
  return true;
}

}  // namespace

int64_t wgmma_swizzle_bytes(int64_t row_bytes) {
  if (row_bytes == 32 || row_bytes == 64) return row_bytes;
  return row_bytes > 0 && row_bytes % 128 == 0 ? 128 : 0;
}

namespace {

// The swizzled row length, in elements, of the tile a region reads (wgmma_swizzle_bytes), or 0
// when it cannot be stored swizzled: its rows must be a multiple of 8 (whole 8-row patterns) and
// its row length a swizzle width or a multiple of 128 bytes, and the region must start at a
// constant multiple of 8 rows and of a swizzled row (the descriptors name whole patterns).
int64_t swizzled_row_elements(const Kernel& kernel, const Region& r) {
  const Symbol& sym = kernel.symbol(r.buffer);
  const size_t rank = sym.shape.size();
  if (rank < 2) return 0;
  std::optional<int64_t> rows = const_int_value(sym.shape[rank - 2]), cols = const_int_value(sym.shape[rank - 1]);
  if (!rows || !cols || *rows % 8 != 0) return 0;
  const int64_t row = wgmma_swizzle_bytes(*cols * dtype_size(sym.dtype)) / dtype_size(sym.dtype);
  if (row == 0) return 0;
  for (size_t d = rank - 2; d < rank; ++d) {
    std::optional<int64_t> start = d < r.ranges.size() ? const_int_value(r.ranges[d].start) : int64_t{0};
    if (!start || *start % (d == rank - 2 ? 8 : row) != 0) return 0;
  }
  return row;
}

bool has_wgmma(const TargetDescription& target, DType input) {
  return target.api == ApiKind::kPtx && target.min_subgroup_size() == 32 && target.max_subgroup_size() == 32 &&
         has_shape(target, input, [](const MatrixShape& s) {
           return s.m == kWarpgroupRows && s.k == 16 && s.instruction.starts_with("wgmma.mma_async");
         });
}

// The warpgroup split of an m x n C tile: groups along m first (each keeps all columns and the
// B strip it reads stays whole), then along n; fewer accumulators per warp beat that order.
std::optional<MatrixGemmPlan> warpgroup_plan(int64_t m, int64_t n, int64_t k, int64_t threads, DType input) {
  if (threads % kWarpgroupThreads != 0 || m % kWarpgroupRows != 0) return std::nullopt;
  const int groups = static_cast<int>(threads / kWarpgroupThreads);
  const int64_t strips = m / kWarpgroupRows, nt = n / kMatrixTile;
  std::optional<MatrixGemmPlan> best;
  for (int gm = groups; gm >= 1; --gm) {
    if (groups % gm || strips % gm) continue;
    const int gn = groups / gm;
    if (nt % gn || (n / gn) > kWarpgroupMaxColumns) continue;
    MatrixGemmPlan p;
    p.warpgroup = true;
    p.groups_m = gm;
    p.groups_n = gn;
    p.tiles_m = static_cast<int>(strips / gm);
    p.tiles_n = static_cast<int>(nt / gn);
    p.k_steps = static_cast<int>(k / kMatrixTile);
    p.input = input;
    if (p.tiles_m * p.tiles_n > kMaxMatrixTilesPerSubgroup) continue;
    if (!best || p.tiles_m * p.tiles_n < best->tiles_m * best->tiles_n) best = p;
  }
  return best;
}

}  // namespace

int row_sharers(const MatrixGemmPlan& p) { return p.warpgroup ? p.groups_n : p.warps_n; }

int64_t plan_rows(const MatrixGemmPlan& p) {
  return p.warpgroup ? int64_t{p.groups_m} * p.tiles_m * kWarpgroupRows : int64_t{p.warps_m} * p.tiles_m * kMatrixTile;
}

bool same_rows(const MatrixGemmPlan& a, const MatrixGemmPlan& b) {
  if (row_sharers(a) != 1 || row_sharers(b) != 1 || a.tiles_m != b.tiles_m || plan_rows(a) != plan_rows(b))
    return false;
  // Same kind: the same split. Mixed: only one strip each gives both the 16 s row origin.
  return a.warpgroup == b.warpgroup || a.tiles_m == 1;
}

bool matrix_elements_addressable(const TargetDescription& target) {
  return target.api == ApiKind::kPtx && target.min_subgroup_size() == 32 && target.max_subgroup_size() == 32;
}

MatrixElementCoords matrix_element_coords(int element) {
  return {1, 8 * ((element / 2) % 2), 2, 8 * (element / 4) + element % 2};
}

int matrix_subgroup_size(const TargetDescription& target, DType input) {
  if (target.min_subgroup_size() != target.max_subgroup_size()) return 0;
  switch (target.api) {
    case ApiKind::kPtx:
      // Two mma.sync.m16n8k16 make one 16x16x16 step; the emitter's fragment layouts are a warp's.
      if (target.min_subgroup_size() == 32 &&
          has_shape(target, input, [](const MatrixShape& s) { return s.m == 16 && s.n == 8 && s.k == 16 &&
                                                                     s.instruction.starts_with("mma.sync"); }))
        return 32;
      return 0;
    case ApiKind::kSpirv:
      if (has_shape(target, input, [](const MatrixShape& s) { return s.m == 16 && s.n == 16 && s.k == 16; }))
        return target.min_subgroup_size();
      return 0;
    case ApiKind::kAmdgcn:
      return 0;  // MFMA / WMMA are not emitted yet
  }
  return 0;
}

MatrixPlanResult plan_matrix_gemm(const Kernel& kernel, const GemmOp& op, const TargetDescription& target,
                                  bool allow_warpgroup, bool stage_fragments, bool whole_rows) {
  MatrixPlanResult out;
  const DType a_type = kernel.symbol(op.a.buffer).dtype, b_type = kernel.symbol(op.b.buffer).dtype;
  const Symbol& c_sym = kernel.symbol(op.c.buffer);
  if (a_type != b_type || (a_type != DType::kF16 && a_type != DType::kBF16)) {
    out.why_not = "the operands are not both f16 or both bf16";
    return out;
  }
  const int sg = matrix_subgroup_size(target, a_type);
  if (sg == 0) {
    out.why_not = absl::StrCat(target.name(), " has no 16x16x16 ", av(dtype_name(a_type)), " matrix unit the lowering uses");
    return out;
  }
  if (c_sym.kind != SymbolKind::kFragment || c_sym.dtype != DType::kF32 || c_sym.shape.size() != 2 ||
      !region_is_whole(kernel, op.c)) {
    out.why_not = "the accumulator is not a whole two-dimensional f32 fragment";
    return out;
  }
  if (!matrix_operand_region(kernel, op.a, stage_fragments, &out.why_not) ||
      !matrix_operand_region(kernel, op.b, stage_fragments, &out.why_not))
    return out;
  std::optional<std::vector<int64_t>> a = region_shape(kernel, op.a), b = region_shape(kernel, op.b),
                                      c = region_shape(kernel, op.c);
  if (!a || !b || !c || a->size() != 2 || b->size() != 2 || c->size() != 2) {
    out.why_not = "operand shapes are not constant and two-dimensional";
    return out;
  }
  const int64_t m = (*c)[0], n = (*c)[1], k = op.transpose_a ? (*a)[0] : (*a)[1];
  if (m % kMatrixTile || n % kMatrixTile || k % kMatrixTile) {
    out.why_not = absl::StrCat("m, n, k = ", m, ", ", n, ", ", k, " are not multiples of 16");
    return out;
  }
  if (kernel.threads % sg != 0) {
    out.why_not = absl::StrCat("the block's ", kernel.threads, " threads are not whole subgroups of ", sg);
    return out;
  }
  // wgmma reads A K-major from its descriptor (or from registers: an untransposed fragment
  // operand) and B either way; a transposed A takes the mma plans, whose loads read either order.
  const bool a_fragment = kernel.symbol(op.a.buffer).kind == SymbolKind::kFragment;
  const bool warpgroup_operands = allow_warpgroup && !op.transpose_a &&
                                  (kernel.symbol(op.a.buffer).kind == SymbolKind::kShared ||
                                   (a_fragment && stage_fragments)) &&
                                  kernel.symbol(op.b.buffer).kind == SymbolKind::kShared;
  const int64_t b_row = warpgroup_operands ? swizzled_row_elements(kernel, op.b) : 0;
  if (b_row > 0 && has_wgmma(target, a_type) && (a_fragment || swizzled_row_elements(kernel, op.a) > 0)) {
    // Warpgroups side by side along n start their N-major B columns at a swizzled row's start
    // (K-major B rows at multiples of 16, which any split gives).
    std::optional<MatrixGemmPlan> p = warpgroup_plan(m, n, k, kernel.threads, a_type);
    if (p && (p->groups_n == 1 || op.transpose_b || (n / p->groups_n) % b_row == 0)) {
      out.plan = p;
      return out;
    }
  }
  // Split the subgroups over the tile, preferring square subgroup tiles (fewest operand loads).
  const int subgroups = static_cast<int>(kernel.threads / sg);
  const int64_t mt = m / kMatrixTile, nt = n / kMatrixTile;
  std::optional<MatrixGemmPlan> best;
  for (int wm = 1; wm <= subgroups; ++wm) {
    if (subgroups % wm) continue;
    const int wn = subgroups / wm;
    if (mt % wm || nt % wn) continue;
    MatrixGemmPlan p{sg, wm, wn, static_cast<int>(mt / wm), static_cast<int>(nt / wn),
                     static_cast<int>(k / kMatrixTile), a_type};
    if (p.tiles_m * p.tiles_n > kMaxMatrixTilesPerSubgroup) continue;
    if (whole_rows && wn == 1) {  // the last candidate; it beats every squarer one
      best = p;
      break;
    }
    if (!best || std::abs(p.tiles_m - p.tiles_n) < std::abs(best->tiles_m - best->tiles_n)) best = p;
  }
  if (!best) {
    out.why_not = absl::StrCat("no split of the ", m, "x", n, " tile over ", subgroups,
                               " subgroups gives whole 16x16 tiles, at most ", kMaxMatrixTilesPerSubgroup,
                               " per subgroup");
    return out;
  }
  out.plan = best;
  return out;
}

}  // namespace tilert::lowering
