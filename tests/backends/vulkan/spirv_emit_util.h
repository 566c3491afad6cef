// Shared by the SPIR-V emitter tests: option sets, validation with SPIRV-Tools (the oracle),
// small builders for SIMT functions, and running an emitted function on the Vulkan device.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <spirv/unified1/spirv.hpp11>

#include "absl/status/status.h"
#include "backends/vulkan/device.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "lowering/simt.h"

namespace tilert::vulkan::testing {

// Vulkan 1.2 with no optional feature, and Vulkan 1.3 with all of them.
SpirvOptions minimal_options();
SpirvOptions full_options();

// "" when SPIRV-Tools accepts `words` for the Vulkan version matching `spirv_version`, else
// the validator's message.
std::string validation_error(const std::vector<uint32_t>& words, uint32_t spirv_version);

// Whether the linked SPIRV-Tools knows SPV_KHR_cooperative_matrix (2023.3 and newer; Debian
// 12's 2023.1 does not) and so can validate modules that use it.
bool linked_validator_knows_cooperative_matrix();
// The same for SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing (Debian 12's 2023.1 knows
// neither).
bool linked_validator_knows_workgroup_matrices();

// What a validator said about a module. A module that uses SPV_KHR_cooperative_matrix (or
// SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing) goes to the linked SPIRV-Tools when it
// knows the extensions, else to the spirv-val program named by the environment variable
// TILERT_SPIRV_VAL; with neither, `checked` is false and `validator` says why. Other modules
// always go to the linked SPIRV-Tools.
struct Verdict {
  bool checked = false;
  std::string error;      // "" when valid
  std::string validator;  // which one judged, or why none did
};
Verdict validate(const std::vector<uint32_t>& words, uint32_t spirv_version);

// Emits `f` with `options`, REQUIREs success and a valid module (or, for a cooperative-matrix
// module no validator here can judge, prints that it went unvalidated), and returns the words.
std::vector<uint32_t> emit_valid(const simt::Function& f, const SpirvOptions& options);

// The module's instructions of opcode `op` (each as its words after the opcode word), whether it
// declares `capability`, its OpExtension names, and the value of the 32-bit OpConstant `id`.
std::vector<std::vector<uint32_t>> instructions(const std::vector<uint32_t>& words, spv::Op op);
bool has_capability(const std::vector<uint32_t>& words, spv::Capability capability);
std::vector<std::string> extensions(const std::vector<uint32_t>& words);
uint32_t constant_value(const std::vector<uint32_t>& words, uint32_t id);

// Function builders.
simt::Param array_param(std::string name, DType type, bool written = false);
simt::Param scalar_param(std::string name, DType type);
simt::Stmt store(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value);
simt::Stmt assign(uint32_t variable, simt::Expr value);
simt::Stmt if_then(simt::Expr condition, simt::Body body, simt::Body else_body = {});
simt::Stmt for_loop(uint32_t variable, simt::Expr begin, simt::Expr end, simt::Expr step,
                    simt::Body body);
simt::Stmt barrier(simt::BarrierKind kind);
// global_index = workgroup_id.x * threads + local_id
simt::Expr global_index(int32_t threads);

// Matrix statements.
simt::Stmt matrix_fill(uint32_t matrix, simt::Expr value);
simt::Stmt matrix_load(uint32_t matrix, uint32_t shared_array, simt::Expr offset, simt::Expr stride);
simt::Stmt matrix_store(uint32_t matrix, uint32_t shared_array, simt::Expr offset, simt::Expr stride);
simt::Stmt matrix_mul_add(uint32_t c, uint32_t a, uint32_t b);
// matrix_tensor_load / _store of `matrix` and global array `array`: window [row0, col0, rows,
// cols, stride].
simt::Stmt matrix_tensor_load(uint32_t matrix, uint32_t array, std::vector<simt::Expr> window);
simt::Stmt matrix_tensor_store(uint32_t matrix, uint32_t array, std::vector<simt::Expr> window);

// c = 0.5 + a[:, 16:32] * b with every matrix statement, run by `threads` invocations (one
// subgroup): a is f16 16x32, b f16 16x16, c f32 16x16, row-major. The product goes through
// shared memory with offsets and strides other than 0 and 16: a_sh = a (offset 16, stride 32),
// b_sh = b (offset 0, stride 16), c_sh is 16x20 f32 with the matrix at offset 4, stride 20.
simt::Function matrix_product_function(int32_t threads);
// SpirvOptions for matrix functions: `base` with cooperative_matrix and float16_arithmetic.
SpirvOptions with_cooperative_matrix(SpirvOptions base);

// A GEMM on workgroup-scope matrices, as a lowering plans one for VK_NV_cooperative_matrix2: one
// workgroup computes C = A * B in one 128x256 f32 accumulator, k in steps of 64 with matrices A
// 128x64 and B 64x256 of `operands` loaded straight from the global arrays a and b; C (array c,
// of `output`: f32, or f16 / bf16 converted from the accumulator) is stored at the end. All three
// are row-major with the row pitches below, sized by the i32 parameters m, n and k. Plain loads
// and stores (matrix_load / matrix_store) need m = 128, n = 256 and k a multiple of 64; with
// `tensor` the matrices are windows of the m x k, k x n and m x n tensors (matrix_tensor_load /
// _store), so m <= 128, n <= 256 and any k: reads outside are 0, writes outside dropped.
struct WorkgroupGemm {
  int32_t threads = 256;
  DType operands = DType::kF16;
  DType output = DType::kF16;
  bool tensor = false;
  int32_t a_pitch = 136, b_pitch = 264, c_pitch = 264;  // elements, each row 16-byte aligned
};
simt::Function workgroup_gemm_function(const WorkgroupGemm& g);
// full_options() with cooperative, workgroup-scope matrices and tensor addressing (SPIR-V 1.6).
SpirvOptions with_workgroup_matrices();

// The bytes of one array argument, uploaded before and downloaded after a run.
using Bytes = std::vector<uint8_t>;
template <typename T>
Bytes bytes_of(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}
template <typename T>
std::vector<T> values_of(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// Emits `f` with `options`, validates it, creates the pipeline on `device` and dispatches
// `workgroups` workgroups. `arrays` holds one entry per array parameter in order (read back
// afterwards); `scalars` one (int, float) value per scalar parameter in order.
struct ScalarArg {
  int64_t int_value = 0;
  double float_value = 0;
};
absl::Status run_function(std::shared_ptr<Device> device, const simt::Function& f,
                          const SpirvOptions& options, std::vector<Bytes>& arrays,
                          const std::vector<ScalarArg>& scalars, uint32_t workgroups);

}  // namespace tilert::vulkan::testing
