// When a gemm runs on the target's matrix unit (tensor cores through mma.sync, Vulkan cooperative
// matrices) and how its tile is split over the block's subgroups. Used twice: by fragment layout
// inference (an accumulator lives in matrix registers only when every gemm into it has a plan) and
// by the gemm lowering. See lowering/README.md, "Matrix gemm".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/kernel.h"
#include "lowering/target.h"

namespace tilert::lowering {

// The one matrix shape the SIMT IR has (simt::MatrixVariable): 16x16 tiles, k step 16.
inline constexpr int kMatrixTile = 16;

// The subgroup size matrix statements run at on `target` for inputs of `input` type with f32
// accumulation; 0 when the target has no such matrix unit (or no single fixed subgroup size).
int matrix_subgroup_size(const TargetDescription& target, DType input);

// A gemm's C tile (m x n) split into warps_m x warps_n subgroup tiles, each tiles_m x tiles_n
// matrices of 16x16, stepping k in k_steps steps of 16.
//
// Warpgroup plans (PTX wgmma, sm_90a): the block's warpgroups (4 subgroups of 32) form a
// groups_m x groups_n grid over C; each warpgroup multiplies tiles_m strips of 64 rows by its
// 16 * tiles_n columns with one m64nNk16 instruction per strip and k step. Warp w of a warpgroup
// holds rows 16 w .. 16 w + 15 of each strip: its accumulator (i, j) is rows
// 64 * (strip i of its group) + 16 w, columns 16 j of its group's columns. The operands are read
// from shared memory by the instruction itself, so their tiles are stored swizzled
// (wgmma_swizzle_bytes, Lowerer::tile_offset).
struct MatrixGemmPlan {
  int subgroup_size = 32;
  int warps_m = 1, warps_n = 1;
  int tiles_m = 1, tiles_n = 1;
  int k_steps = 1;
  DType input = DType::kF16;
  bool warpgroup = false;
  int groups_m = 1, groups_n = 1;
  bool operator==(const MatrixGemmPlan&) const = default;
};

// Subgroups that hold parts of each row of C (mma: warps_n; warpgroup: groups_n); 1 means every
// row lies whole in one subgroup, so a reduction along the rows needs no exchange between them.
int row_sharers(const MatrixGemmPlan& p);
// Rows of C the plan covers.
int64_t plan_rows(const MatrixGemmPlan& p);
// Whether two plans give every subgroup the same rows of C, strip i of one being strip i of the
// other, with whole rows per subgroup: a warpgroup plan with one 64-row strip per warpgroup puts
// rows 16 s .. 16 s + 15 in subgroup s, as an mma plan with one 16-row strip per subgroup does.
// The lane's elements of a 16x16 accumulator are the same in both (ptx_warpgroup.cc), so such
// accumulators, row vectors and register operands can be shared between the two kinds.
bool same_rows(const MatrixGemmPlan& a, const MatrixGemmPlan& b);

// The swizzle width in bytes (32, 64 or 128; 0: none fits) of a warpgroup gemm operand tile
// whose rows are `row_bytes` long: a row of 32 or 64 bytes is one swizzled row, longer rows are
// cut into 128-byte column blocks.
int64_t wgmma_swizzle_bytes(int64_t row_bytes);

// Whether the lowering may read and write single elements of `target`'s 16x16 accumulators
// (simt matrix_element / matrix_element_store): PTX, whose emitter holds them in the
// mma.m16n8k16 C layout. Lane L's element k (of kMatrixAccumulatorElements) is then row
// L / 4 + 8 ((k / 2) % 2), column 8 (k / 4) + 2 (L % 4) + k % 2 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16"). Cooperative matrices (SPIR-V) do not say which element a lane holds.
inline constexpr int kMatrixAccumulatorElements = 8;
bool matrix_elements_addressable(const TargetDescription& target);
struct MatrixElementCoords {
  int row_of_group = 0, row_offset = 0;  // row = row_offset + row_of_group * (lane / 4)
  int col_of_quad = 0, col_offset = 0;   // col = col_offset + col_of_quad * (lane % 4)
};
MatrixElementCoords matrix_element_coords(int element);

// Rows of a warpgroup strip and threads of a warpgroup (wgmma's m64 and its 4 warps).
inline constexpr int kWarpgroupRows = 64;
inline constexpr int kWarpgroupThreads = 128;
inline constexpr int kWarpgroupMaxColumns = 256;

// The plan for `op`, or why there is none (the reason is for `tilert lower --target simt`
// comments and tests; a gemm without a plan takes the plain path). Requires: A and B shared
// tiles of one 16-bit float type, whose regions are the trailing two dimensions of their tiles
// with columns starting at multiples of 8 and rows of a multiple of 8 elements (transposed
// operands are loaded column-major); C a whole f32 fragment; m, n, k multiples of 16; the
// block's threads a multiple of the subgroup size; at most kMaxMatrixTilesPerSubgroup
// accumulators per subgroup. With `stage_fragments`, A and B may also be whole 2-D fragments,
// which the lowering copies into staging tiles first (lowering/lower_staged_gemm.cc).
struct MatrixPlanResult {
  std::optional<MatrixGemmPlan> plan;
  std::string why_not;
};
inline constexpr int kMaxMatrixTilesPerSubgroup = 16;
// With `allow_warpgroup`, a warpgroup plan is preferred where the target has wgmma for the
// operand type, the block is whole warpgroups, the operand regions start at multiples of 8 in
// both dimensions, and the C tile splits into 64-row strips and at most 256 columns per group.
// A is a shared tile read K-major, or (with `stage_fragments`) an untransposed fragment, which the
// layout inference then keeps in registers as wgmma's register A operand or takes the plan back;
// B is a shared tile read N-major, or K-major when transposed.
// With `whole_rows`, an mma plan keeps every row of C in one subgroup (warps_n = 1) where such a
// split exists: a reduction along the rows then needs no exchange between subgroups.
MatrixPlanResult plan_matrix_gemm(const Kernel& kernel, const GemmOp& op, const TargetDescription& target,
                                  bool allow_warpgroup = false, bool stage_fragments = false,
                                  bool whole_rows = false);

}  // namespace tilert::lowering
