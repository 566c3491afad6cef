// The vulkan registry row through the public C API: devices listed with name, driver and
// features; buffers work; kernels run once the lowering handles them (until then loading says
// why); `auto` stays on a device that can run kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tilert/tilert.h"

namespace {


struct Context {
  tilert_context raw = nullptr;
  Context() { REQUIRE_MESSAGE(tilert_context_create(&raw) == TILERT_OK, tilert_last_error()); }
  ~Context() { tilert_context_destroy(raw); }
};

// The first vulkan device, or null after printing why the vulkan backend is unavailable.
tilert_device vulkan_device_or_skip(const Context& context) {
  for (int32_t b = 0; b < tilert_backend_count(context.raw); ++b) {
    tilert_backend_info info{};
    REQUIRE(tilert_backend_get_info(context.raw, b, &info) == TILERT_OK);
    if (std::string(info.name) != "vulkan") continue;
    if (!info.available) {
      MESSAGE("skipped: vulkan unavailable: " << info.reason);
      // Unavailable only for the absence of a driver, never because the row is a stub.
      CHECK(std::string(info.reason).find("no vulkan backend in this build") == std::string::npos);
      return nullptr;
    }
  }
  tilert_device device = nullptr;
  REQUIRE_MESSAGE(tilert_device_find(context.raw, "vulkan:0", &device) == TILERT_OK,
                  tilert_last_error());
  return device;
}

// examples/gelu.tile's gelu over an m x n f32 tensor, launched and waited for.
void launch_gelu(tilert_kernel kernel, tilert_stream stream, tilert_buffer x, tilert_buffer y, int64_t m,
                 int64_t n) {
  int64_t shape[2] = {m, n};
  tilert_arg args[4] = {tilert_arg_tensor(x, TILERT_F32, 2, shape), tilert_arg_tensor(y, TILERT_F32, 2, shape),
                        tilert_arg_int(m), tilert_arg_int(n)};
  REQUIRE_MESSAGE(tilert_launch(kernel, stream, args, 4) == TILERT_OK, tilert_last_error());
  REQUIRE(tilert_stream_sync(stream) == TILERT_OK);
}

double gelu(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))); }

TEST_CASE("vulkan devices are listed with name, driver and features") {
  Context context;
  tilert_device device = vulkan_device_or_skip(context);
  if (device == nullptr) return;
  tilert_device_info info{};
  REQUIRE(tilert_device_get_info(device, &info) == TILERT_OK);
  CHECK(info.kind == TILERT_DEVICE_VULKAN);
  CHECK(info.index == 0);
  CHECK(std::string(info.name).size() > 0);
  CHECK(std::string(info.driver).find(", Vulkan 1.") != std::string::npos);
  CHECK(std::string(info.features).rfind("subgroup ", 0) == 0);
  CHECK(std::string(info.features).find(" KB") != std::string::npos);
}

TEST_CASE("auto prefers hardware and the reference backend to a software Vulkan device") {
  Context context;
  if (vulkan_device_or_skip(context) == nullptr) return;
  tilert_device chosen = nullptr;
  REQUIRE(tilert_device_find(context.raw, "auto", &chosen) == TILERT_OK);
  tilert_device_info info{};
  REQUIRE(tilert_device_get_info(chosen, &info) == TILERT_OK);
  // lavapipe (llvmpipe) runs kernels but is a CPU implementation: never the automatic choice.
  CHECK(std::string(info.name).find("llvmpipe") == std::string::npos);
  tilert_device first = nullptr;
  REQUIRE(tilert_device_get(context.raw, 0, &first) == TILERT_OK);
  CHECK(first == chosen);
}

TEST_CASE("buffers on a vulkan device round-trip through the C API") {
  Context context;
  tilert_device device = vulkan_device_or_skip(context);
  if (device == nullptr) return;
  std::vector<float> data = {1.5f, -2.0f, 3.25f, 1e6f};
  tilert_buffer buffer = nullptr;
  REQUIRE_MESSAGE(tilert_buffer_create(context.raw, device, 16, &buffer) == TILERT_OK,
                  tilert_last_error());
  CHECK(tilert_buffer_size(buffer) == 16);
  REQUIRE(tilert_buffer_upload(buffer, 0, data.data(), 16) == TILERT_OK);
  std::vector<float> back(4, 0.0f);
  REQUIRE(tilert_buffer_download(buffer, 0, back.data(), 16) == TILERT_OK);
  CHECK(back == data);
  float tail = 0;
  REQUIRE(tilert_buffer_download(buffer, 12, &tail, 4) == TILERT_OK);
  CHECK(tail == 1e6f);
  tilert_buffer_destroy(buffer);
}

TEST_CASE("gelu on a vulkan device matches the formula") {
  Context context;
  tilert_device device = vulkan_device_or_skip(context);
  if (device == nullptr) return;
  tilert_module module = nullptr;
  tilert_status loaded =
      tilert_module_load_file(context.raw, device, TILERT_SOURCE_DIR "/examples/gelu.tile", &module);
  REQUIRE_MESSAGE(loaded == TILERT_OK, tilert_last_error());
  tilert_kernel kernel = nullptr;
  REQUIRE(tilert_kernel_get(module, "gelu", &kernel) == TILERT_OK);
  const int64_t m = 77, n = 100;
  std::vector<float> x(m * n), y(m * n, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -3.0f + 6.0f * static_cast<float>(i % 97) / 97.0f;
  tilert_buffer xb = nullptr, yb = nullptr;
  REQUIRE(tilert_buffer_create(context.raw, device, x.size() * 4, &xb) == TILERT_OK);
  REQUIRE(tilert_buffer_create(context.raw, device, y.size() * 4, &yb) == TILERT_OK);
  REQUIRE(tilert_buffer_upload(xb, 0, x.data(), x.size() * 4) == TILERT_OK);
  tilert_stream stream = nullptr;
  REQUIRE(tilert_stream_create(context.raw, device, &stream) == TILERT_OK);
  launch_gelu(kernel, stream, xb, yb, m, n);
  REQUIRE(tilert_buffer_download(yb, 0, y.data(), y.size() * 4) == TILERT_OK);
  for (size_t i = 0; i < x.size(); ++i) CHECK(y[i] == doctest::Approx(gelu(x[i])).epsilon(1e-5));
  tilert_stream_destroy(stream);
  tilert_buffer_destroy(xb);
  tilert_buffer_destroy(yb);
  tilert_module_destroy(module);
}

// TILERT_VULKAN_SPECIALIZE=1 makes every kernel's integer scalars specialization constants (by
// default only kernels on workgroup-scope matrices, which lavapipe lacks): each set of sizes gets
// its own pipeline, and a launch must use the one made for its values, never another size's.
TEST_CASE("a specialized kernel runs each set of sizes with its own pipeline") {
  setenv("TILERT_VULKAN_SPECIALIZE", "1", 1);
  Context context;
  tilert_device device = vulkan_device_or_skip(context);
  if (device == nullptr) {
    unsetenv("TILERT_VULKAN_SPECIALIZE");
    return;
  }
  tilert_module module = nullptr;
  tilert_status loaded =
      tilert_module_load_file(context.raw, device, TILERT_SOURCE_DIR "/examples/gelu.tile", &module);
  unsetenv("TILERT_VULKAN_SPECIALIZE");  // read when the module is prepared
  REQUIRE_MESSAGE(loaded == TILERT_OK, tilert_last_error());
  tilert_kernel kernel = nullptr;
  REQUIRE(tilert_kernel_get(module, "gelu", &kernel) == TILERT_OK);
  const size_t capacity = 77 * 100;
  std::vector<float> x(capacity);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -3.0f + 6.0f * static_cast<float>(i % 89) / 89.0f;
  tilert_buffer xb = nullptr, yb = nullptr;
  REQUIRE(tilert_buffer_create(context.raw, device, capacity * 4, &xb) == TILERT_OK);
  REQUIRE(tilert_buffer_create(context.raw, device, capacity * 4, &yb) == TILERT_OK);
  REQUIRE(tilert_buffer_upload(xb, 0, x.data(), capacity * 4) == TILERT_OK);
  tilert_stream stream = nullptr;
  REQUIRE(tilert_stream_create(context.raw, device, &stream) == TILERT_OK);
  // The second size is smaller: a launch that reused the first size's pipeline would write
  // past its M x N elements, over the sentinel.
  const int64_t sizes[3][2] = {{77, 100}, {33, 50}, {77, 100}};
  for (const auto& size : sizes) {
    const int64_t m = size[0], n = size[1];
    CAPTURE(m);
    CAPTURE(n);
    std::vector<float> y(capacity, -7.0f);
    REQUIRE(tilert_buffer_upload(yb, 0, y.data(), capacity * 4) == TILERT_OK);
    launch_gelu(kernel, stream, xb, yb, m, n);
    REQUIRE(tilert_buffer_download(yb, 0, y.data(), capacity * 4) == TILERT_OK);
    int wrong = 0;
    for (size_t i = 0; i < capacity; ++i) {
      double expected = i < static_cast<size_t>(m * n) ? gelu(x[i]) : -7.0;
      wrong += std::fabs(y[i] - expected) > 1e-5 * std::max(1.0, std::fabs(expected));
    }
    CHECK(wrong == 0);
  }
  tilert_stream_destroy(stream);
  tilert_buffer_destroy(xb);
  tilert_buffer_destroy(yb);
  tilert_module_destroy(module);
}

}  // namespace
