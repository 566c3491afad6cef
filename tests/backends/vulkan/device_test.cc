// Physical devices as tilert describes them, and logical devices.
#include <doctest/doctest.h>

#include <string>

#include "backends/vulkan/device.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace tilert::vulkan {
namespace {

TEST_CASE("lavapipe is enumerated with plausible compute properties") {
  const auto& environment = testing::vulkan_environment();
  if (absl::IsUnavailable(environment.status())) {
    MESSAGE("skipped: no Vulkan driver: " << std::string(environment.status().message()));
    return;
  }
  REQUIRE_MESSAGE(environment.ok(), std::string(environment.status().message()));
  const PhysicalDeviceInfo* lavapipe = nullptr;
  for (const PhysicalDeviceInfo& info : environment->devices) {
    MESSAGE(info.name << " [" << info.driver_name << "] " << info.features_string());
    CHECK(!info.name.empty());
    CHECK(info.subgroup_size >= 1);
    CHECK(info.max_shared_memory_bytes >= 16 * 1024);
    CHECK(info.max_invocations >= 128);
    CHECK((info.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) != 0);
    CHECK(info.api_version >= VK_API_VERSION_1_1);
    if (info.driver_name == "llvmpipe") lavapipe = &info;
  }
  // Where mesa-vulkan-drivers is installed (CI), lavapipe must be among them.
  if (lavapipe == nullptr) {
    MESSAGE("lavapipe not installed: only the generic checks ran");
    return;
  }
  CHECK(lavapipe->type == VK_PHYSICAL_DEVICE_TYPE_CPU);
  CHECK(lavapipe->name.find("llvmpipe") != std::string::npos);
  CHECK(lavapipe->driver_info.find("Mesa") != std::string::npos);
  CHECK((lavapipe->subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0);
  std::string features = lavapipe->features_string();
  CHECK(features.rfind("subgroup " + std::to_string(lavapipe->subgroup_size) + ", shared " +
                           std::to_string(lavapipe->max_shared_memory_bytes / 1024) + " KB",
                       0) == 0);
  CHECK(lavapipe->api_version_string().rfind("1.", 0) == 0);
}

TEST_CASE("features are listed in a fixed order, only when present") {
  PhysicalDeviceInfo info;
  info.subgroup_size = 32;
  info.max_shared_memory_bytes = 48 * 1024;
  CHECK(info.features_string() == "subgroup 32, shared 48 KB");
  info.shader_float16 = info.shader_int8 = info.cooperative_matrix = true;
  info.subgroup_size_control = true;
  CHECK(info.features_string() ==
        "subgroup 32, shared 48 KB, fp16, int8, cooperative-matrix (no 16x16x16 f16 shape), "
        "subgroup-size-control");
  info.cooperative_matrix_16x16x16_f16 = true;
  CHECK(info.features_string() ==
        "subgroup 32, shared 48 KB, fp16, int8, cooperative-matrix 16x16x16 f16, subgroup-size-control");
  info.cooperative_matrix_16x16x16_bf16 = true;
  CHECK(info.features_string() ==
        "subgroup 32, shared 48 KB, fp16, int8, cooperative-matrix 16x16x16 f16 bf16, "
        "subgroup-size-control");
  info.pipeline_statistics = true;
  CHECK(info.features_string() ==
        "subgroup 32, shared 48 KB, fp16, int8, cooperative-matrix 16x16x16 f16 bf16, "
        "subgroup-size-control, pipeline-statistics");
  info.workgroup_matrices = info.workgroup_matrix_tensor_addressing = true;
  info.workgroup_matrix_max_invocations = 256;
  info.flexible_matrix_max_dimension = 256;
  info.workgroup_matrix_reserved_shared_bytes = 1024;
  info.workgroup_matrix_shapes = {{16, 16, 16, false, 128}, {16, 16, 16, true, 256}};
  CHECK(info.features_string() ==
        "subgroup 32, shared 48 KB, fp16, int8, cooperative-matrix 16x16x16 f16 bf16, "
        "workgroup-matrices tensor-addressing (up to 256 invocations, dimensions up to 256, 1024 shared "
        "bytes reserved; 16x16x16 f16/128 16x16x16 bf16/256), subgroup-size-control, pipeline-statistics");
  info.api_version = VK_MAKE_API_VERSION(0, 1, 3, 238);
  CHECK(info.api_version_string() == "1.3.238");
}

TEST_CASE("a logical device with one compute queue is created and usable") {
  VULKAN_DEVICE_OR_SKIP(device);
  CHECK(device->handle() != VK_NULL_HANDLE);
  CHECK(device->pipeline_cache() != VK_NULL_HANDLE);
  CHECK((device->vk().vkCmdDispatch != nullptr));
  CHECK(device->check_usable().ok());
  // An empty submission completes well within its time limit.
  CHECK(device->submit_and_wait([](VkCommandBuffer) {}, std::chrono::milliseconds(5000), "empty")
            .ok());
}

}  // namespace
}  // namespace tilert::vulkan
