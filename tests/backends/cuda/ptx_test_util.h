// Helpers for the PTX emitter tests: SIMT statement builders, a tensor-core test kernel, and
// ptxas, the test oracle.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::cuda::testing {

simt::Stmt assign(uint32_t var, simt::Expr value);
simt::Stmt assign_at(uint32_t var, simt::Expr index, simt::Expr value);
simt::Stmt store(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value);
simt::Stmt atomic_add(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value);
simt::Stmt if_else(simt::Expr condition, simt::Body then_body, simt::Body else_body = {});
simt::Stmt for_loop(uint32_t var, simt::Expr begin, simt::Expr end, simt::Expr step,
                    simt::Body body, bool unroll = false);
simt::Stmt while_loop(simt::Expr condition, simt::Body body);
simt::Stmt barrier(simt::BarrierKind kind, std::vector<simt::Expr> operands = {});
simt::Stmt return_stmt();
simt::Stmt matrix_fill(uint32_t matrix, simt::Expr value);
simt::Stmt matrix_load(uint32_t matrix, uint32_t shared_array, simt::Expr offset, simt::Expr stride);
simt::Stmt matrix_store(uint32_t matrix, uint32_t shared_array, simt::Expr offset, simt::Expr stride);
simt::Stmt matrix_mul_add(uint32_t c, uint32_t a, uint32_t b);
simt::Expr i32(int64_t v);
simt::Expr f32(double v);

// C = 0.25 + A * B on the tensor cores, one block of 32 * `warps` threads: A is (16 warps) x 32
// and B 32 x 16, both of `input` (f16 or bf16), row-major in global memory; C is (16 warps) x 16
// f32. Parameters: A, B, C. Warp w computes rows 16w..16w+15 of C in two k-steps: A and B are
// copied into padded shared arrays (row strides 40 and 24 elements), each step loads a 16x16 A
// and B matrix and multiplies-adds them into one accumulator (filled with 0.25 first), which is
// stored into a third shared array (row stride 20) and copied out. With one warp every offset is
// a constant; with more, the offsets depend on the subgroup id (run-time values), and the store's
// offset is a variable (so the emitter cannot pair its columns into v2 stores).
// Matrices: 0 the accumulator, 1 A, 2 B. Shared arrays: 0 A, 1 B, 2 C.
inline constexpr int kMatrixTestN = 16, kMatrixTestK = 32;
simt::Function matrix_product_kernel(DType input, int warps);

// The target `name` ("ptx:sm_80"); fails the test when it does not parse.
lowering::TargetDescription target(const char* name);

// Emits `f` for ptx:sm_80 and ptx:sm_90a and assembles each with ptxas (a message, no failure,
// where ptxas is absent).
void check_assembles(const simt::Function& f);

// The result of assembling PTX text with ptxas for `arch`.
struct PtxasResult {
  bool ran = false;      // false: ptxas is not installed (skip_reason says where it looked)
  bool ok = false;
  std::string output;    // ptxas's messages
  std::string skip_reason;
};
PtxasResult run_ptxas(const std::string& ptx, const std::string& arch);

// ptxas accepts `ptx` for `arch` (a message instead where ptxas is not installed).
void check_ptx_assembles(const std::string& ptx, const std::string& arch);

}  // namespace tilert::cuda::testing
