// The target description and emitter options for a Vulkan device come from its properties.
#include <doctest/doctest.h>

#include "backends/vulkan/target.h"

namespace tilert::vulkan {
namespace {

using lowering::TargetFeature;

TEST_CASE("a Vulkan 1.3 device with every feature") {
  PhysicalDeviceInfo info;
  info.api_version = VK_API_VERSION_1_3;
  info.subgroup_size = 32;
  info.subgroup_stages = VK_SHADER_STAGE_COMPUTE_BIT;
  info.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  info.max_shared_memory_bytes = 49152;
  info.max_invocations = 1024;
  info.shader_float16 = info.shader_int8 = info.storage_16bit = info.storage_8bit = true;
  info.shader_clock = true;
  lowering::TargetDescription target = target_for_device(info);
  CHECK(target.name() == "spirv:vulkan1.3");
  CHECK(target.subgroup_sizes == std::vector<int>{32});
  CHECK(target.shared_memory_per_block == 49152);
  CHECK(target.max_threads_per_block == 1024);
  CHECK(target.has(TargetFeature::kFloat16Arithmetic));
  CHECK(target.has(TargetFeature::kInt8Arithmetic));
  CHECK(target.has(TargetFeature::kStorage16Bit));
  CHECK(target.has(TargetFeature::kSubgroupArithmetic));
  CHECK(target.has(TargetFeature::kShaderClock));
  CHECK_FALSE(target.limits_are_guaranteed_minimums);
  SpirvOptions o = spirv_options_for_device(info);
  CHECK(o.spirv_version == 0x00010600);
  CHECK((o.float16_arithmetic && o.int8_arithmetic && o.storage_16bit && o.storage_8bit &&
         o.subgroup_arithmetic && o.shader_clock));
  CHECK_FALSE(o.float_atomic_add);
  // Clustered reductions only where the device lists them.
  CHECK_FALSE(target.has(TargetFeature::kSubgroupClustered));
  CHECK_FALSE(o.subgroup_clustered);
  info.subgroup_operations |= VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
  CHECK(target_for_device(info).has(TargetFeature::kSubgroupClustered));
  CHECK(spirv_options_for_device(info).subgroup_clustered);
}

TEST_CASE("a bare Vulkan 1.2 device keeps the guaranteed description and no options") {
  PhysicalDeviceInfo info;
  info.api_version = VK_API_VERSION_1_2;
  info.subgroup_operations = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;  // but not in compute shaders
  lowering::TargetDescription target = target_for_device(info);
  CHECK(target.name() == "spirv:vulkan1.2");
  CHECK(target.shared_memory_per_block == 16384);
  CHECK(target.max_threads_per_block == 128);
  CHECK(target.feature_bits == 0);
  SpirvOptions o = spirv_options_for_device(info);
  CHECK(o.spirv_version == 0x00010500);
  CHECK_FALSE(o.subgroup_arithmetic);
}

// A device as an NVIDIA driver describes itself: VK_KHR_cooperative_matrix with the 16x16x16
// f16 shape, shaderFloat16 and vulkanMemoryModel.
PhysicalDeviceInfo cooperative_matrix_device() {
  PhysicalDeviceInfo info;
  info.api_version = VK_API_VERSION_1_3;
  info.subgroup_size = 32;
  info.shader_float16 = info.vulkan_memory_model = true;
  info.cooperative_matrix = info.cooperative_matrix_16x16x16_f16 = true;
  return info;
}

TEST_CASE("a 16x16x16 f16 cooperative matrix becomes the target's matrix shape and option") {
  lowering::TargetDescription target = target_for_device(cooperative_matrix_device());
  REQUIRE(target.matrix_shapes.size() == 1);
  const lowering::MatrixShape& shape = target.matrix_shapes.front();
  CHECK(shape.instruction == "OpCooperativeMatrixMulAddKHR");
  CHECK((shape.m == 16 && shape.n == 16 && shape.k == 16));
  CHECK(shape.supports_n(16));
  CHECK_FALSE(shape.supports_n(32));
  CHECK(shape.input == DType::kF16);
  CHECK(shape.accumulator == DType::kF32);
  CHECK(target.subgroup_sizes == std::vector<int>{32});
  SpirvOptions o = spirv_options_for_device(cooperative_matrix_device());
  CHECK(o.cooperative_matrix);
  CHECK(o.float16_arithmetic);
}

TEST_CASE("cooperative matrices are not used without every piece they need") {
  auto without = [](auto change) {
    PhysicalDeviceInfo info = cooperative_matrix_device();
    change(info);
    CHECK(target_for_device(info).matrix_shapes.empty());
    CHECK_FALSE(spirv_options_for_device(info).cooperative_matrix);
  };
  without([](PhysicalDeviceInfo& i) { i.cooperative_matrix_16x16x16_f16 = false; });
  without([](PhysicalDeviceInfo& i) { i.cooperative_matrix = false; });
  without([](PhysicalDeviceInfo& i) { i.shader_float16 = false; });
  without([](PhysicalDeviceInfo& i) { i.vulkan_memory_model = false; });
  // bf16 matrices come on top of f16 ones (the emitter declares them in cooperative-matrix
  // modules only).
  without([](PhysicalDeviceInfo& i) {
    i.cooperative_matrix_16x16x16_f16 = false;
    i.cooperative_matrix_16x16x16_bf16 = i.bfloat16_cooperative_matrix = true;
  });
}

TEST_CASE("a bf16 shape with VK_KHR_shader_bfloat16's features becomes a second matrix shape") {
  PhysicalDeviceInfo info = cooperative_matrix_device();
  info.cooperative_matrix_16x16x16_bf16 = info.bfloat16_cooperative_matrix = true;
  lowering::TargetDescription target = target_for_device(info);
  REQUIRE(target.matrix_shapes.size() == 2);
  CHECK(target.matrix_shapes[0].input == DType::kF16);
  CHECK(target.matrix_shapes[1].input == DType::kBF16);
  CHECK(target.matrix_shapes[1].accumulator == DType::kF32);
  CHECK((target.matrix_shapes[1].m == 16 && target.matrix_shapes[1].n == 16 && target.matrix_shapes[1].k == 16));
  CHECK(spirv_options_for_device(info).bfloat16_cooperative_matrix);

  // The shape alone (no shaderBFloat16CooperativeMatrix), or the features without the shape:
  // f16 only.
  for (bool shape : {true, false}) {
    PhysicalDeviceInfo partial = cooperative_matrix_device();
    partial.cooperative_matrix_16x16x16_bf16 = shape;
    partial.bfloat16_cooperative_matrix = !shape;
    CHECK(target_for_device(partial).matrix_shapes.size() == 1);
    CHECK_FALSE(spirv_options_for_device(partial).bfloat16_cooperative_matrix);
    CHECK(spirv_options_for_device(partial).cooperative_matrix);
  }
}

TEST_CASE("workgroup-scope matrices: granules, limits and options from VK_NV_cooperative_matrix2") {
  PhysicalDeviceInfo info = cooperative_matrix_device();
  info.cooperative_matrix_16x16x16_bf16 = info.bfloat16_cooperative_matrix = true;
  info.workgroup_matrices = info.workgroup_matrix_tensor_addressing = true;
  info.workgroup_matrix_max_invocations = 256;
  info.flexible_matrix_max_dimension = 1024;
  info.workgroup_matrix_reserved_shared_bytes = 8192;
  info.workgroup_matrix_shapes = {{16, 16, 16, false, 32}, {32, 32, 16, false, 256}, {32, 32, 16, true, 256}};
  lowering::TargetDescription target = target_for_device(info);
  const lowering::WorkgroupMatrices& w = target.workgroup_matrices;
  CHECK(w.max_invocations == 256);
  CHECK(w.max_dimension == 1024);
  CHECK(w.reserved_shared_bytes == 8192);
  CHECK(w.tensor_addressing);
  REQUIRE(w.granules.size() == 3);
  REQUIRE(w.granule(256, DType::kBF16) != nullptr);
  CHECK((w.granule(256, DType::kBF16)->m == 32 && w.granule(256, DType::kBF16)->k == 16));
  CHECK(w.granule(32, DType::kF16)->n == 16);
  CHECK(w.granule(128, DType::kF16) == nullptr);
  SpirvOptions o = spirv_options_for_device(info);
  CHECK(o.workgroup_matrices);
  CHECK(o.tensor_addressing);

  // bf16 granules only with bf16 cooperative matrices; nothing without subgroup-scope f16 ones.
  info.bfloat16_cooperative_matrix = false;
  CHECK(target_for_device(info).workgroup_matrices.granule(256, DType::kBF16) == nullptr);
  CHECK(target_for_device(info).workgroup_matrices.granules.size() == 2);
  info.shader_float16 = false;
  CHECK(target_for_device(info).workgroup_matrices.granules.empty());
  CHECK_FALSE(spirv_options_for_device(info).workgroup_matrices);
}

}  // namespace
}  // namespace tilert::vulkan
