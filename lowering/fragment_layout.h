// Where fragment tiles live: in registers spread over the block's threads (distributed: element e
// of the row-major tile on thread e % threads, slot e / threads), in matrix registers of the
// target's matrix unit (matrix: 16x16 tiles held by subgroups, see lowering/matrix_plan.h), or in
// shared memory when some access needs elements another thread holds. See lowering/README.md,
// "Fragment layouts".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "ir/kernel.h"
#include "lowering/matrix_plan.h"
#include "lowering/target.h"

namespace tilert::lowering {

// kMatrixOperand: A operands of matrix gemms held in matrix registers, converted from the
// accumulator they are copied from (see FragmentLayouts::register_operands). kMatrixRows: a
// vector with one element per row of matrix accumulators, held by the lanes that hold the rows
// (FragmentLayouts::matrix_row_vectors).
enum class FragmentLayout : uint8_t { kDistributed, kShared, kMatrix, kMatrixOperand, kMatrixRows };

struct FragmentLayouts {
  std::map<SymbolId, FragmentLayout> by_symbol;
  std::map<SymbolId, MatrixGemmPlan> matrix_plans;  // of the kMatrix fragments
  // Shared tiles read by warpgroup gemms: stored swizzled (lowering/matrix_plan.h).
  std::set<SymbolId> swizzled_tiles;
  // Shared tiles read by matrix gemms that are not warpgroup gemms (ldmatrix / cooperative-matrix
  // loads, 8 rows of 16 bytes per phase): stored with rows 16 bytes longer where that fits, so
  // rows whose pitch is a multiple of 128 bytes do not all fall in the same banks.
  std::set<SymbolId> padded_operand_tiles;
  // Matrix accumulators that parallel bodies also read and write element by element (targets
  // with matrix_elements_addressable), and the fragments matrix gemms take as operands (kept in
  // shared memory with padded rows, where the matrix loads read them).
  std::set<SymbolId> elementwise_matrices;
  std::set<SymbolId> matrix_operand_fragments;
  // Matrix accumulators reduced along their rows (each lane folds its elements of a row, the 4
  // lanes of a quad combine them: targets with kSubgroupClustered), and fragments that matrix
  // accumulators are copied into (shared-backed: each lane stores its own elements there).
  std::set<SymbolId> row_reduced_matrices;
  std::set<SymbolId> matrix_copy_destinations;
  // Fragments that are only copied whole from one matrix accumulator and read as the
  // (untransposed) A operand of matrix gemms, where each subgroup's rows of the source are the
  // rows it multiplies (both plans mma with warps_n = 1 and the same rows per subgroup): kept as
  // A matrices in registers, converted from the accumulator's (the mma.m16n8k16 C layout of two
  // n8 tiles is the A layout of one k16 step). Fragment -> its source accumulator.
  std::map<SymbolId, SymbolId> register_operands;
  // One-dimensional f32 fragments that hold a value per row of matrix accumulators which keep
  // whole rows in a subgroup, all with the same rows per subgroup (row_vector_plan): attention's
  // row max and row sum. Each lane keeps the elements of the rows it holds (g and g + 8 of each
  // 16-row strip: 2 tiles_m registers; the 4 lanes of a quad hold copies), so reductions land
  // in registers and parallel bodies read them without shared memory. Their every mention is a
  // whole fill, a whole copy (to or from a fragment like them, or to or from memory), the
  // destination of a row reduction of such an accumulator, a read at the row's index in a
  // parallel body over such an accumulator, or an access at the iteration's own index in a
  // one-dimensional parallel body that accesses only such fragments.
  std::set<SymbolId> matrix_row_vectors;
  MatrixGemmPlan row_vector_plan;
  FragmentLayout of(SymbolId id) const;
};

// Whether element `indices` of a fragment of `frag_shape` is held by the thread that runs an
// iteration of `op`: the loop's extents equal the fragment's shape, its ranges start at 0, and the
// indices are the loop variables in order. Then iteration and element have the same flat number.
bool owner_local(const ParallelOp& op, const std::vector<Expr>& indices,
                 const std::vector<int64_t>& frag_shape);

// Calls fn(symbol, indices) for every element access in the parallel body of `op`: assignment
// targets and loads, in values, indices and if conditions, nested ifs included.
void visit_parallel_accesses(const ParallelOp& op,
                             const std::function<void(SymbolId, const std::vector<Expr>&)>& fn);

// A fragment is a matrix accumulator when it is the accumulator of a gemm, every gemm into it has
// a matrix plan on `target`, and it is otherwise only filled whole, copied whole to something
// that is not a fragment, and (on targets whose accumulator elements the lowering can address,
// with mma plans) read and written by parallel bodies at their own iteration's element, with no
// other fragment accessed that way in the same body, copied whole into a fragment of its shape
// (which is then shared-backed), or reduced along its rows (with clustered subgroup reductions;
// its gemms then prefer plans that keep each row in one subgroup). Fragment operands of its
// gemms are shared-backed, except A operands that can stay in matrix registers
// (register_operands). Else it is distributed unless a parallel body reads or writes it at a
// position other than its own iteration's, or it is copied to a fragment of another shape (the
// destination's owner reads elements the source's owner holds).
// With `allow_warpgroup`, gemms take warpgroup plans where plan_matrix_gemm offers them.
FragmentLayouts infer_fragment_layouts(const Kernel& kernel, const TargetDescription& target,
                                       bool allow_warpgroup = false);

// The last step of infer_fragment_layouts (lowering/row_vectors.cc): which one-dimensional
// fragments become matrix row vectors, given the matrix accumulators' layouts and plans.
void place_matrix_row_vectors(const Kernel& kernel, FragmentLayouts& layouts);

// Mentions of `id` in the kernel's statements: regions, loads and assignment targets, in nested
// blocks and parallel bodies too.
int symbol_mentions(const Kernel& kernel, SymbolId id);

}  // namespace tilert::lowering
