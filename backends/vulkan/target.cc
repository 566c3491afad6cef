// Target description and SPIR-V options from a physical device's properties and features.
#include "backends/vulkan/target.h"

namespace tilert::vulkan {
namespace {

bool has_vulkan_1_3(const PhysicalDeviceInfo& info) { return info.api_version >= VK_API_VERSION_1_3; }

// The emitter's cooperative matrices: f16 A and B loaded from 16-bit shared arrays (so
// shaderFloat16) under the Vulkan memory model (which SPV_KHR_cooperative_matrix requires).
bool has_f16_cooperative_matrix(const PhysicalDeviceInfo& info) {
  return info.cooperative_matrix && info.cooperative_matrix_16x16x16_f16 && info.shader_float16 &&
         info.vulkan_memory_model;
}

// bf16 A and B (SPV_KHR_bfloat16), on top of the f16 ones: the emitter declares bf16 matrices
// only in modules that already are cooperative-matrix modules.
bool has_bf16_cooperative_matrix(const PhysicalDeviceInfo& info) {
  return has_f16_cooperative_matrix(info) && info.cooperative_matrix_16x16x16_bf16 &&
         info.bfloat16_cooperative_matrix;
}

bool has_subgroup_arithmetic(const PhysicalDeviceInfo& info) {
  return (info.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
         (info.subgroup_operations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0 &&
         (info.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0;
}

bool has_subgroup_clustered(const PhysicalDeviceInfo& info) {
  return has_subgroup_arithmetic(info) && (info.subgroup_operations & VK_SUBGROUP_FEATURE_CLUSTERED_BIT) != 0;
}

}  // namespace

lowering::TargetDescription target_for_device(const PhysicalDeviceInfo& info) {
  using lowering::TargetFeature;
  lowering::TargetDescription target = lowering::predefined_target(
      has_vulkan_1_3(info) ? lowering::PredefinedTarget::kVulkan13 : lowering::PredefinedTarget::kVulkan12);
  if (info.subgroup_size > 0) target.subgroup_sizes = {static_cast<int>(info.subgroup_size)};
  if (info.max_shared_memory_bytes > 0) target.shared_memory_per_block = info.max_shared_memory_bytes;
  if (info.max_invocations > 0) target.max_threads_per_block = static_cast<int>(info.max_invocations);
  target.set(TargetFeature::kFloat16Arithmetic, info.shader_float16);
  target.set(TargetFeature::kInt8Arithmetic, info.shader_int8);
  target.set(TargetFeature::kStorage16Bit, info.storage_16bit);
  target.set(TargetFeature::kSubgroupArithmetic, has_subgroup_arithmetic(info));
  target.set(TargetFeature::kSubgroupClustered, has_subgroup_clustered(info));
  target.set(TargetFeature::kShaderClock, info.shader_clock);
  target.matrix_shapes.clear();
  if (has_f16_cooperative_matrix(info)) {
    target.matrix_shapes.push_back(lowering::MatrixShape{
        .instruction = "OpCooperativeMatrixMulAddKHR", .m = 16, .n = 16, .k = 16, .n_max = 16,
        .n_step = 0, .input = DType::kF16, .accumulator = DType::kF32});
  }
  if (has_bf16_cooperative_matrix(info)) {
    target.matrix_shapes.push_back(lowering::MatrixShape{
        .instruction = "OpCooperativeMatrixMulAddKHR", .m = 16, .n = 16, .k = 16, .n_max = 16,
        .n_step = 0, .input = DType::kBF16, .accumulator = DType::kF32});
  }
  // Workgroup matrices in modules that are cooperative-matrix modules already (f16 shapes).
  if (info.workgroup_matrices && has_f16_cooperative_matrix(info)) {
    lowering::WorkgroupMatrices& w = target.workgroup_matrices;
    w.max_invocations = static_cast<int>(info.workgroup_matrix_max_invocations);
    w.max_dimension = static_cast<int>(info.flexible_matrix_max_dimension);
    w.reserved_shared_bytes = info.workgroup_matrix_reserved_shared_bytes;
    w.tensor_addressing = info.workgroup_matrix_tensor_addressing;
    for (const PhysicalDeviceInfo::WorkgroupMatrixShape& shape : info.workgroup_matrix_shapes) {
      if (shape.bfloat16 && !has_bf16_cooperative_matrix(info)) continue;
      w.granules.push_back({static_cast<int>(shape.m), static_cast<int>(shape.n), static_cast<int>(shape.k),
                            static_cast<int>(shape.invocations), shape.bfloat16 ? DType::kBF16 : DType::kF16});
    }
  }
  target.limits_are_guaranteed_minimums = false;
  return target;
}

SpirvOptions spirv_options_for_device(const PhysicalDeviceInfo& info) {
  SpirvOptions o;
  o.spirv_version = has_vulkan_1_3(info) ? 0x00010600 : 0x00010500;
  o.float16_arithmetic = info.shader_float16;
  o.int8_arithmetic = info.shader_int8;
  o.storage_16bit = info.storage_16bit;
  o.storage_8bit = info.storage_8bit;
  o.subgroup_arithmetic = has_subgroup_arithmetic(info);
  o.subgroup_clustered = has_subgroup_clustered(info);
  o.shader_clock = info.shader_clock;
  o.float_atomic_add = false;  // the device is created without VK_EXT_shader_atomic_float
  o.cooperative_matrix = has_f16_cooperative_matrix(info);
  o.bfloat16_cooperative_matrix = has_bf16_cooperative_matrix(info);
  o.workgroup_matrices = o.cooperative_matrix && info.workgroup_matrices;
  o.tensor_addressing = o.workgroup_matrices && info.workgroup_matrix_tensor_addressing;
  o.max_shared_bytes = info.max_shared_memory_bytes;
  return o;
}

}  // namespace tilert::vulkan
