// A 16x16x16 cooperative-matrix product emitted from the SIMT IR, run on every Vulkan device that
// offers the f16 shape (VK_KHR_cooperative_matrix, A and B f16, C f32, subgroup scope), and a GEMM
// on workgroup-scope matrices on every device that offers those (VK_NV_cooperative_matrix2), both
// compared with the host's product. lavapipe offers neither: the tests then say that they skipped.
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

// Small multiples of 1/4 by coordinates, and a value the rows' padding holds that no product
// may read: a wrong stride or an unclamped read shows as a wrong element.
float a_at(int r, int q) { return static_cast<float>((r * 7 + q * 3) % 11 - 5) / 4.0f; }
float b_at(int q, int j) { return static_cast<float>((q * 5 + j * 3) % 9 - 4) / 4.0f; }
constexpr float kPadding = 1000.0f;
constexpr uint16_t kUntouched = 0x7bff;  // f16 65504 in C where nothing may be stored

// Runs workgroup_gemm_function(g) for an m x n x k product on `device` and compares C (f16) with
// the host's product rounded to nearest even: every element inside m x n, and the rest of each
// row left as it was.
void check_workgroup_gemm(const std::shared_ptr<Device>& device, const SpirvOptions& options, const WorkgroupGemm& g,
                          int m, int n, int k) {
  CAPTURE(g.tensor);
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  std::vector<uint16_t> a(static_cast<size_t>(m) * g.a_pitch), b(static_cast<size_t>(k) * g.b_pitch),
      c(static_cast<size_t>(m) * g.c_pitch, kUntouched);
  for (int r = 0; r < m; ++r)
    for (int q = 0; q < g.a_pitch; ++q) a[r * g.a_pitch + q] = f32_to_f16_bits(q < k ? a_at(r, q) : kPadding);
  for (int q = 0; q < k; ++q)
    for (int j = 0; j < g.b_pitch; ++j) b[q * g.b_pitch + j] = f32_to_f16_bits(j < n ? b_at(q, j) : kPadding);
  std::vector<Bytes> arrays = {bytes_of(a), bytes_of(b), bytes_of(c)};
  absl::Status run = run_function(device, workgroup_gemm_function(g), options, arrays, {{m, 0}, {n, 0}, {k, 0}}, 1);
  REQUIRE_MESSAGE(run.ok(), std::string(run.message()));
  c = values_of<uint16_t>(arrays[2]);
  int wrong = 0;
  for (int r = 0; r < m; ++r) {
    for (int j = 0; j < g.c_pitch; ++j) {
      float sum = 0;  // exact: multiples of 1/16, far from f32's precision
      for (int q = 0; q < k && j < n; ++q) sum += a_at(r, q) * b_at(q, j);
      const uint16_t expected = j < n ? f32_to_f16_bits(sum) : kUntouched;
      if (c[r * g.c_pitch + j] != expected && wrong++ < 8) {
        MESSAGE("c[", r, "][", j, "] = ", f16_bits_to_f32(c[r * g.c_pitch + j]), ", expected ",
                f16_bits_to_f32(expected));
      }
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("a GEMM on workgroup-scope matrices matches the host on devices that offer them") {
  const absl::StatusOr<VulkanEnvironment>& environment = vulkan_environment();
  if (absl::IsUnavailable(environment.status())) {
    MESSAGE("skipped: no Vulkan driver: ", std::string(environment.status().message()));
    return;
  }
  REQUIRE_MESSAGE(environment.ok(), std::string(environment.status().message()));
  int ran = 0;
  std::string seen;
  for (const PhysicalDeviceInfo& info : environment->devices) {
    absl::StrAppend(&seen, seen.empty() ? "" : "; ", info.name, " (", info.features_string(), ")");
    SpirvOptions options = spirv_options_for_device(info);
    if (!options.workgroup_matrices) continue;
    CAPTURE(info.name);
    // An f16 shape whose granules divide the 128x256x64 step, for its number of invocations.
    const PhysicalDeviceInfo::WorkgroupMatrixShape* shape = nullptr;
    for (const auto& s : info.workgroup_matrix_shapes)
      if (!s.bfloat16 && 128 % s.m == 0 && 256 % s.n == 0 && 64 % s.k == 0 && (shape == nullptr || s.invocations == 256))
        shape = &s;
    if (shape == nullptr) {
      MESSAGE("skipped on ", info.name, ": no f16 workgroup-matrix shape divides 128x256x64");
      continue;
    }
    absl::StatusOr<std::shared_ptr<Device>> device = Device::create(environment->instance, info);
    REQUIRE_MESSAGE(device.ok(), std::string(device.status().message()));
    WorkgroupGemm g;
    g.threads = static_cast<int32_t>(shape->invocations);
    check_workgroup_gemm(*device, options, g, 128, 256, 128);
    if (options.tensor_addressing) {
      // A ragged product inside the tile, with row pitches other than the tensors' widths.
      g.tensor = true;
      check_workgroup_gemm(*device, options, g, 100, 200, 120);
    }
    MESSAGE("ran the workgroup-matrix GEMM on ", info.name, " with ", g.threads, " invocations",
            options.tensor_addressing ? ", plain and through tensor layouts" : "");
    ++ran;
  }
  if (ran == 0) MESSAGE("skipped: no Vulkan device offers workgroup-scope cooperative matrices; devices: ", seen);
}

}  // namespace
}  // namespace tilert::vulkan
