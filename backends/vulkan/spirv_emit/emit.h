// The SPIR-V emitter: one SIMT function (lowering/simt.h) to a Vulkan compute shader module, and
// the push-constant layout the runtime packs scalar arguments into. How the SIMT IR maps onto
// SPIR-V is described in backends/vulkan/README.md, "Emitting SPIR-V".
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/simt.h"

namespace tilert::vulkan {

// What the emitted module may use. The version follows the Vulkan API (1.5 for Vulkan 1.2, 1.6
// for Vulkan 1.3); every flag is an optional device feature the pipeline's device has enabled.
struct SpirvOptions {
  uint32_t spirv_version = 0x00010500;
  bool float16_arithmetic = false;  // shaderFloat16: f16 shared / private arrays stay 16-bit
  bool int8_arithmetic = false;     // shaderInt8: i8 / u8 shared / private arrays stay 8-bit
  bool storage_16bit = false;       // storageBuffer16BitAccess: 16-bit global elements
  bool storage_8bit = false;        // storageBuffer8BitAccess: 8-bit global elements
  bool subgroup_arithmetic = false; // VK_SUBGROUP_FEATURE_ARITHMETIC_BIT in compute shaders
  bool subgroup_clustered = false;  // VK_SUBGROUP_FEATURE_CLUSTERED_BIT: clustered reductions
  bool shader_clock = false;        // VK_KHR_shader_clock (subgroup clock)
  bool float_atomic_add = false;    // VK_EXT_shader_atomic_float: f32 atomic add on buffers
                                    // and shared memory
  // VK_KHR_cooperative_matrix with a 16x16x16 shape of f16 A and B, f32 accumulators, subgroup
  // scope; it implies float16_arithmetic and the vulkanMemoryModel feature. A function with
  // matrix statements is then emitted with SPV_KHR_cooperative_matrix under the Vulkan memory
  // model (the extension requires it); other functions are emitted as without it.
  bool cooperative_matrix = false;
  // With cooperative_matrix: the device also has the 16x16x16 shape with bf16 A and B, and
  // VK_KHR_shader_bfloat16's shaderBFloat16Type and shaderBFloat16CooperativeMatrix. bf16
  // matrices are then emitted with SPV_KHR_bfloat16; without it they are refused.
  bool bfloat16_cooperative_matrix = false;
  // With cooperative_matrix: VK_NV_cooperative_matrix2's workgroupScope and flexibleDimensions.
  // Workgroup-scope matrices (simt::MatrixScope::kWorkgroup) are then emitted with
  // SPV_NV_cooperative_matrix2 (SPIR-V 1.6); without it they are refused.
  bool workgroup_matrices = false;
  // With workgroup_matrices: cooperativeMatrixTensorAddressing, for matrix_tensor_load / _store
  // (SPV_NV_tensor_addressing); without it they are refused.
  bool tensor_addressing = false;
  // The device's maxComputeSharedMemorySize (0: unknown). Shared arrays of narrow types that
  // SPIR-V keeps widened to 32 bits (bf16, f16 and i8 without their arithmetic, except 16-bit
  // tiles packed two to a word) take more bytes than the lowering counted; a function whose
  // arrays then exceed this is refused (ResourceExhausted) rather than handed to a driver that
  // may lose the device over it.
  uint32_t max_shared_bytes = 0;
  // i32, u32 and bool scalar parameters become specialization constants instead of push
  // constants: OpSpecConstant with SpecId = the parameter's index, supplied when the pipeline is
  // created (specialization_word). The driver then compiles with the values known, which NVIDIA's
  // needs to stage workgroup-scope matrix loads well (tests/bench/RESULTS.md, 2026-12-07
  // (afternoon)); the price is a pipeline per set of values.
  bool specialize_scalars = false;
};

// Where each scalar parameter lives in the push-constant block. Every scalar takes 4 bytes
// (bool as a u32 0/1; i8 / u8 widened to 32-bit integers; f16 / bf16 widened to f32) or 8 bytes
// (i64, f64), at an offset aligned to its size, in parameter order; the total is rounded up to
// a multiple of 4.
// With SpirvOptions::specialize_scalars, the parameters it specializes have no place here.
struct PushConstantLayout {
  std::vector<int32_t> offsets;  // per parameter of the function; -1 for arrays
  std::vector<bool> specialized; // per parameter: a specialization constant instead
  uint32_t total_bytes = 0;
};
PushConstantLayout push_constant_layout(const simt::Function& f, bool specialize_scalars = false);

// Whether specialize_scalars makes a parameter of this type a specialization constant, and the
// 32-bit word that supplies its value (the wrapped integer; 0 or 1 for bool).
bool specializable(DType type);
uint32_t specialization_word(DType type, int64_t value);

// The bytes a scalar parameter of type `type` occupies in the push-constant block, and how a
// launch argument is stored there: integers (and bool) as int64 values, floats as doubles.
int push_constant_size(DType type);
void store_push_constant(DType type, int64_t int_value, double float_value, void* destination);

// The module's words. Errors: Unimplemented for what the options (or Vulkan) cannot express
// (named barriers, a clock without shader_clock, subgroup reductions without subgroup
// arithmetic, clustered ones without subgroup_clustered, matrices without cooperative_matrix,
// bf16 matrices without bfloat16_cooperative_matrix, workgroup-scope matrices without
// workgroup_matrices or SPIR-V 1.6, matrix_tensor_load / _store without tensor_addressing,
// matrix loads and stores of global arrays packed into 32-bit words without storage_16bit),
// ResourceExhausted for shared arrays that exceed max_shared_bytes as stored, InvalidArgument for
// a malformed function (an unknown parameter, variable, array or matrix, a matrix statement on
// the wrong kind of matrix or array), each naming the function.
absl::StatusOr<std::vector<uint32_t>> emit_spirv(const simt::Function& f, const SpirvOptions& o);

}  // namespace tilert::vulkan
