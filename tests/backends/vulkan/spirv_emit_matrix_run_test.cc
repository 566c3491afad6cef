// A 16x16x16 cooperative-matrix product emitted from the SIMT IR, run on every Vulkan device that
// offers the f16 shape (VK_KHR_cooperative_matrix, A and B f16, C f32, subgroup scope) and
// compared with the host's product. lavapipe offers none: the test then says that it skipped.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/vulkan/target.h"
#include "tests/backends/vulkan/spirv_emit_util.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace tilert::vulkan {
namespace {

using namespace testing;

// Small multiples of 1/4 in f16: every product and every partial sum is exact in f32, so the
// device's result must equal the host's whatever order it adds in.
float a_value(int i) { return static_cast<float>((i * 7) % 11 - 5) / 4.0f; }
float b_value(int i) { return static_cast<float>((i * 5) % 9 - 4) / 4.0f; }

TEST_CASE("a 16x16x16 cooperative-matrix product matches the host on devices that offer it") {
  const absl::StatusOr<VulkanEnvironment>& environment = vulkan_environment();
  if (absl::IsUnavailable(environment.status())) {
    MESSAGE("skipped: no Vulkan driver: ", std::string(environment.status().message()));
    return;
  }
  REQUIRE_MESSAGE(environment.ok(), std::string(environment.status().message()));

  std::vector<uint16_t> a(16 * 32), b(16 * 16);
  for (int i = 0; i < 16 * 32; ++i) a[i] = f32_to_f16_bits(a_value(i));
  for (int i = 0; i < 16 * 16; ++i) b[i] = f32_to_f16_bits(b_value(i));
  std::vector<float> expected(16 * 16);
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 16; ++n) {
      float sum = 0.5f;
      for (int k = 0; k < 16; ++k) sum += a_value(r * 32 + 16 + k) * b_value(k * 16 + n);
      expected[r * 16 + n] = sum;
    }
  }

  int ran = 0;
  std::string seen;
  for (const PhysicalDeviceInfo& info : environment->devices) {
    absl::StrAppend(&seen, seen.empty() ? "" : "; ", info.name, " (", info.features_string(), ")");
    SpirvOptions options = spirv_options_for_device(info);
    if (!options.cooperative_matrix) continue;
    CAPTURE(info.name);
    REQUIRE(info.subgroup_size > 0);
    REQUIRE(info.subgroup_size <= info.max_invocations);
    absl::StatusOr<std::shared_ptr<Device>> device = Device::create(environment->instance, info);
    REQUIRE_MESSAGE(device.ok(), std::string(device.status().message()));
    // One subgroup: every lane takes part in every matrix statement.
    simt::Function f = matrix_product_function(static_cast<int32_t>(info.subgroup_size));
    std::vector<Bytes> arrays = {bytes_of(a), bytes_of(b), Bytes(16 * 16 * sizeof(float))};
    absl::Status run = run_function(*device, f, options, arrays, {}, 1);
    REQUIRE_MESSAGE(run.ok(), std::string(run.message()));
    std::vector<float> c = values_of<float>(arrays[2]);
    int wrong = 0;
    for (int i = 0; i < 16 * 16; ++i) {
      if (std::fabs(c[i] - expected[i]) > 1e-6f) {
        if (wrong++ < 8) MESSAGE("c[", i / 16, "][", i % 16, "] = ", c[i], ", expected ", expected[i]);
      }
    }
    CHECK(wrong == 0);
    MESSAGE("ran the 16x16x16 cooperative-matrix product on ", info.name);
    ++ran;
  }
  if (ran == 0) {
    MESSAGE("skipped: no Vulkan device offers a 16x16x16 f16 cooperative matrix with shaderFloat16 "
            "and vulkanMemoryModel; devices: ", seen);
  }
}

}  // namespace
}  // namespace tilert::vulkan
