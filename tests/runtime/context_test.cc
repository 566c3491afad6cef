// Contexts, devices and backends: what the registry reports, device specs, TILERT_DEVICE.
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "tests/runtime/runtime_test_util.h"

namespace tilert_test {
namespace {

TEST_CASE("every backend is listed, the GPU ones unavailable with their reason") {
  CpuFixture f;
  REQUIRE(tilert_backend_count(f.context) == 4);
  const char* names[] = {"cuda", "hip", "vulkan", "cpu"};
  for (int32_t i = 0; i < 4; ++i) {
    tilert_backend_info info{};
    REQUIRE(tilert_backend_get_info(f.context, i, &info) == TILERT_OK);
    CHECK(std::string(info.name) == names[i]);
    if (i == 2) {
      // vulkan: available where a Vulkan driver is installed (lavapipe in CI), else the reason.
      CHECK(info.available == (std::string(info.reason).empty() ? 1 : 0));
    } else if (i == 1) {
      // hip: its runtime row loads libamdhip64; where ROCm is absent it says so.
      CHECK(info.available == 0);
      CHECK(std::string(info.reason).find("libamdhip64.so not found: ROCm is not installed") == 0);
    } else if (i == 0) {
      // cuda: available where an NVIDIA driver is installed, else it names the missing library.
      if (info.available == 0) {
        CHECK(std::string(info.reason).find("libcuda.so.1 not found: no NVIDIA driver") == 0);
      } else {
        CHECK(std::string(info.reason).empty());
      }
    } else {
      CHECK(info.available == 1);
      CHECK(std::string(info.reason).empty());
    }
  }
  tilert_backend_info info{};
  CHECK_FAILS_WITH(tilert_backend_get_info(f.context, 4, &info), TILERT_ERROR_NOT_FOUND,
                   "backend index 4 is out of range (4 backends)");
}

TEST_CASE("the cpu device describes itself") {
  CpuFixture f;
  // The cpu first, then any vulkan device: those cannot run kernels yet, so they come last.
  int32_t count = tilert_device_count(f.context);
  REQUIRE(count >= 1);
  tilert_device first = nullptr;
  REQUIRE(tilert_device_get(f.context, 0, &first) == TILERT_OK);
  CHECK(first == f.cpu);
  tilert_device_info info{};
  REQUIRE(tilert_device_get_info(f.cpu, &info) == TILERT_OK);
  CHECK(info.kind == TILERT_DEVICE_CPU);
  CHECK(info.index == 0);
  CHECK(std::string(info.name).rfind("cpu (", 0) == 0);
  CHECK(std::string(info.name).find(" threads)") != std::string::npos);
  CHECK(std::string(info.driver).find("reference interpreter") != std::string::npos);
  CHECK(std::string(info.features).find("mbarrier") != std::string::npos);
  CHECK(std::string(info.features).find("roles") != std::string::npos);
  CHECK_FAILS_WITH(tilert_device_get(f.context, count, &first), TILERT_ERROR_NOT_FOUND,
                   "device index " + std::to_string(count) + " is out of range (" +
                       std::to_string(count) + (count == 1 ? " device)" : " devices)"));
  CHECK(first == nullptr);
}

TEST_CASE("device specs") {
  CpuFixture f;
  tilert_device d = nullptr;
  // auto is the best device: the list's first.
  tilert_device best = nullptr;
  REQUIRE(tilert_device_get(f.context, 0, &best) == TILERT_OK);
  CHECK(tilert_device_find(f.context, "auto", &d) == TILERT_OK);
  CHECK(d == best);
  CHECK(tilert_device_find(f.context, "cpu:0", &d) == TILERT_OK);
  CHECK(d == f.cpu);
  CHECK_FAILS_WITH(tilert_device_find(f.context, "tpu", &d), TILERT_ERROR_INVALID_ARGUMENT,
                   "unknown device kind 'tpu' (expected auto, cuda, hip, vulkan or cpu)");
  CHECK(d == nullptr);
  // vulkan is found where a Vulkan driver is installed; elsewhere it is unavailable, saying why.
  if (tilert_device_find(f.context, "vulkan", &d) == TILERT_OK) {
    tilert_device_info info{};
    REQUIRE(tilert_device_get_info(d, &info) == TILERT_OK);
    CHECK(info.kind == TILERT_DEVICE_VULKAN);
  } else {
    CHECK(std::string(tilert_last_error()).find("vulkan is unavailable: ") != std::string::npos);
  }
  // No ROCm exists where these tests run: the hip backend is unavailable and says why.
  CHECK_FAILS_WITH(tilert_device_find(f.context, "hip:1", &d), TILERT_ERROR_UNAVAILABLE,
                   "hip is unavailable: libamdhip64.so not found");
  CHECK_FAILS_WITH(tilert_device_find(f.context, "cpu:3", &d), TILERT_ERROR_NOT_FOUND,
                   "cpu:3: no such device (1 cpu device)");
  CHECK_FAILS_WITH(tilert_device_find(f.context, "cpu:x", &d), TILERT_ERROR_INVALID_ARGUMENT,
                   "device spec 'cpu:x': the index must be a non-negative integer");
  CHECK_FAILS_WITH(tilert_device_find(f.context, "cpu:-1", &d), TILERT_ERROR_INVALID_ARGUMENT,
                   "the index must be a non-negative integer");
  CHECK_FAILS_WITH(tilert_device_find(f.context, "cpu:99999999999", &d),
                   TILERT_ERROR_INVALID_ARGUMENT, "the index must be a non-negative integer");
  CHECK_FAILS_WITH(tilert_device_find(f.context, "auto:0", &d), TILERT_ERROR_INVALID_ARGUMENT,
                   "auto takes no index");
  CHECK_FAILS_WITH(tilert_device_find(f.context, "", &d), TILERT_ERROR_INVALID_ARGUMENT,
                   "device spec '': expected auto, cuda, hip, vulkan or cpu");
}

// Sets TILERT_DEVICE for one scope.
struct ScopedDeviceEnv {
  explicit ScopedDeviceEnv(const char* value) { setenv("TILERT_DEVICE", value, 1); }
  ~ScopedDeviceEnv() { unsetenv("TILERT_DEVICE"); }
};

TEST_CASE("TILERT_DEVICE picks the first device, and a spec naming none fails context creation") {
  tilert_context context = nullptr;
  {
    ScopedDeviceEnv env("cpu:0");
    REQUIRE(tilert_context_create(&context) == TILERT_OK);
    tilert_device first = nullptr;
    REQUIRE(tilert_device_get(context, 0, &first) == TILERT_OK);
    tilert_device_info info{};
    REQUIRE(tilert_device_get_info(first, &info) == TILERT_OK);
    CHECK(info.kind == TILERT_DEVICE_CPU);
    tilert_context_destroy(context);
  }
  {
    ScopedDeviceEnv env("hip");
    CHECK_FAILS_WITH(tilert_context_create(&context), TILERT_ERROR_UNAVAILABLE,
                     "TILERT_DEVICE=hip: hip is unavailable: libamdhip64.so not found");
    CHECK(context == nullptr);
  }
  {
    ScopedDeviceEnv env("tpu:1");
    CHECK_FAILS_WITH(tilert_context_create(&context), TILERT_ERROR_INVALID_ARGUMENT,
                     "TILERT_DEVICE=tpu:1: unknown device kind 'tpu'");
  }
  {
    ScopedDeviceEnv env("cpu:2");
    CHECK_FAILS_WITH(tilert_context_create(&context), TILERT_ERROR_NOT_FOUND,
                     "TILERT_DEVICE=cpu:2: cpu:2: no such device (1 cpu device)");
  }
}

TEST_CASE("status and dtype names") {
  CHECK(std::string(tilert_status_name(TILERT_ERROR_DEADLOCK)) == "TILERT_ERROR_DEADLOCK");
  CHECK(std::string(tilert_status_name(TILERT_OK)) == "TILERT_OK");
  CHECK(std::string(tilert_status_name(static_cast<tilert_status>(77))) == "TILERT_ERROR_UNKNOWN");
  CHECK(tilert_dtype_size(TILERT_F16) == 2);
  CHECK(tilert_dtype_size(TILERT_I64) == 8);
  CHECK(tilert_dtype_size(static_cast<tilert_dtype>(42)) == 0);
  CHECK(std::string(tilert_dtype_name(TILERT_BF16)) == "bf16");
  CHECK(std::string(tilert_dtype_name(static_cast<tilert_dtype>(-1))) == "invalid");
}

TEST_CASE("NULL handles and out-pointers are errors naming the parameter, never crashes") {
  CpuFixture f;
  CHECK_FAILS_WITH(tilert_context_create(nullptr), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_context_create: out is NULL");
  CHECK(tilert_device_count(nullptr) == 0);
  CHECK(std::string(tilert_last_error()) == "tilert_device_count: context is NULL");
  CHECK(tilert_backend_count(nullptr) == 0);
  tilert_device device = nullptr;
  CHECK_FAILS_WITH(tilert_device_get(nullptr, 0, &device), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_device_get: context is NULL");
  CHECK_FAILS_WITH(tilert_device_find(f.context, nullptr, &device), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_device_find: spec is NULL");
  CHECK_FAILS_WITH(tilert_device_get_info(nullptr, nullptr), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_device_get_info: out is NULL");
  tilert_device_info info{};
  CHECK_FAILS_WITH(tilert_device_get_info(nullptr, &info), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_device_get_info: device is NULL");
  tilert_module module = nullptr;
  CHECK_FAILS_WITH(tilert_module_load(f.context, nullptr, "x", 1, &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "tilert_module_load: device is NULL");
  CHECK_FAILS_WITH(tilert_module_load(f.context, f.cpu, nullptr, 4, &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "tilert_module_load: data is NULL");
  CHECK_FAILS_WITH(tilert_module_load_file(f.context, f.cpu, nullptr, &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "tilert_module_load_file: path is NULL");
  CHECK(tilert_module_kernel_count(nullptr) == 0);
  CHECK(tilert_module_kernel_name(nullptr, 0) == nullptr);
  CHECK(std::string(tilert_last_error()) == "tilert_module_kernel_name: module is NULL");
  tilert_kernel kernel = nullptr;
  CHECK_FAILS_WITH(tilert_kernel_get(nullptr, "k", &kernel), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_kernel_get: module is NULL");
  CHECK(tilert_kernel_param_count(nullptr) == 0);
  tilert_param_info param{};
  CHECK_FAILS_WITH(tilert_kernel_param_info(nullptr, 0, &param), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_kernel_param_info: kernel is NULL");
  tilert_buffer buffer = nullptr;
  CHECK_FAILS_WITH(tilert_buffer_create(nullptr, f.cpu, 16, &buffer),
                   TILERT_ERROR_INVALID_ARGUMENT, "tilert_buffer_create: context is NULL");
  CHECK(tilert_buffer_size(nullptr) == 0);
  char bytes[4] = {};
  CHECK_FAILS_WITH(tilert_buffer_upload(nullptr, 0, bytes, 4), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_buffer_upload: buffer is NULL");
  CHECK_FAILS_WITH(tilert_buffer_download(nullptr, 0, bytes, 4), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_buffer_download: buffer is NULL");
  tilert_stream stream = nullptr;
  CHECK_FAILS_WITH(tilert_stream_create(f.context, nullptr, &stream),
                   TILERT_ERROR_INVALID_ARGUMENT, "tilert_stream_create: device is NULL");
  CHECK_FAILS_WITH(tilert_stream_sync(nullptr), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_stream_sync: stream is NULL");
  CHECK_FAILS_WITH(tilert_launch(nullptr, f.stream, nullptr, 0), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_launch: kernel is NULL");
  // Destroying NULL is a no-op.
  tilert_context_destroy(nullptr);
  tilert_module_destroy(nullptr);
  tilert_buffer_destroy(nullptr);
  tilert_stream_destroy(nullptr);
}

TEST_CASE("a device of another context is rejected") {
  CpuFixture a, b;
  tilert_buffer buffer = nullptr;
  CHECK_FAILS_WITH(tilert_buffer_create(a.context, b.cpu, 16, &buffer),
                   TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_buffer_create: the device does not belong to this context");
  tilert_module module = nullptr;
  CHECK_FAILS_WITH(tilert_module_load(a.context, b.cpu, "", 0, &module),
                   TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_module_load: the device does not belong to this context");
}

TEST_CASE("the last error is per thread") {
  CpuFixture f;
  tilert_device d = nullptr;
  REQUIRE(tilert_device_find(f.context, "tpu", &d) != TILERT_OK);
  std::string other;
  std::thread thread([&] {
    other = tilert_last_error();  // nothing failed on this thread yet
    tilert_device_find(f.context, "cpu:7", &d);
  });
  thread.join();
  CHECK(other.empty());
  CHECK(std::string(tilert_last_error()).find("unknown device kind 'tpu'") != std::string::npos);
}

TEST_CASE("modules, buffers and streams may outlive their context") {
  tilert_context context = nullptr;
  REQUIRE(tilert_context_create(&context) == TILERT_OK);
  tilert_device cpu = nullptr;
  REQUIRE(tilert_device_find(context, "cpu", &cpu) == TILERT_OK);
  std::string text = read_text_file(kScaleAddPath);
  tilert_module module = nullptr;
  REQUIRE(tilert_module_load(context, cpu, text.data(), text.size(), &module) == TILERT_OK);
  tilert_buffer buffer = nullptr;
  REQUIRE(tilert_buffer_create(context, cpu, 16, &buffer) == TILERT_OK);
  tilert_stream stream = nullptr;
  REQUIRE(tilert_stream_create(context, cpu, &stream) == TILERT_OK);
  tilert_context_destroy(context);

  float values[4] = {1, 2, 3, 4};
  CHECK(tilert_buffer_upload(buffer, 0, values, sizeof values) == TILERT_OK);
  CHECK(tilert_module_kernel_count(module) == 1);
  CHECK(tilert_stream_sync(stream) == TILERT_OK);
  tilert_stream_destroy(stream);
  tilert_buffer_destroy(buffer);
  tilert_module_destroy(module);
}

}  // namespace
}  // namespace tilert_test
