// libamdhip64 loaded with dlopen. Handles (modules, functions, streams) are opaque pointers and
// hipError_t is an int, so no HIP header is needed to build.
#include "backends/hip/driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "backends/hip/kfd_topology.h"
#include "ir/status.h"

namespace tilert::hip {
namespace {

constexpr const char* kLibraryNames[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
constexpr int kHipSuccess = 0;
constexpr int kHipErrorNotReady = 600;
// hipModuleLaunchKernel's `extra` keys: a pointer to the packed arguments and their size.
void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(1);
void* const kLaunchParamBufferSize = reinterpret_cast<void*>(2);
void* const kLaunchParamEnd = reinterpret_cast<void*>(3);

}  // namespace

struct Driver::Symbols {
#define X(name, params) int(*name) params = nullptr;
#include "backends/hip/hip_symbols.def"
#undef X
  const char* (*hipGetErrorString)(int) = nullptr;  // optional: only improves messages
};

Driver::~Driver() = default;  // the library stays loaded: HIP tears itself down at exit

absl::StatusOr<std::shared_ptr<Driver>> Driver::load() {
  std::string tried;
  void* handle = nullptr;
  std::string name;
  for (const char* candidate : kLibraryNames) {
    handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      name = candidate;
      break;
    }
    absl::StrAppend(&tried, tried.empty() ? "" : ", ", candidate);
  }
  if (handle == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("libamdhip64.so not found: ROCm is not installed (tried ", tried, ")"));
  }
  auto symbols = std::make_unique<Symbols>();
#define X(symbol, params)                                                                  \
  symbols->symbol = reinterpret_cast<int(*) params>(dlsym(handle, #symbol));               \
  if (symbols->symbol == nullptr) {                                                        \
    return absl::UnavailableError(absl::StrCat(name, " lacks ", #symbol, " (too old?)"));  \
  }
#include "backends/hip/hip_symbols.def"
#undef X
  symbols->hipGetErrorString = reinterpret_cast<const char* (*)(int)>(dlsym(handle, "hipGetErrorString"));
  std::shared_ptr<Driver> driver(new Driver());
  driver->library_name_ = name;
  driver->handle_ = handle;
  driver->symbols_ = std::move(symbols);
  RETURN_IF_ERROR(driver->check(driver->symbols_->hipInit(0), "hipInit"));
  return driver;
}

absl::Status Driver::check(int error, std::string_view what) const {
  if (error == kHipSuccess) return absl::OkStatus();
  const char* text = symbols_->hipGetErrorString ? symbols_->hipGetErrorString(error) : nullptr;
  std::string message = absl::StrCat(av(what), " failed: ", text ? text : "hip error ", text ? "" : absl::StrCat(error));
  // hipErrorOutOfMemory is 2 in every ROCm release.
  if (error == 2) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

std::string Driver::version() const {
  int version = 0;
  if (symbols_->hipRuntimeGetVersion(&version) != kHipSuccess) return "HIP (version unknown)";
  // HIP_VERSION = major * 10000000 + minor * 100000 + patch.
  return absl::StrCat("HIP ", version / 10000000, ".", version / 100000 % 100, ".", version % 100000);
}

absl::StatusOr<std::vector<DeviceInfo>> Driver::devices() const {
  int count = 0;
  RETURN_IF_ERROR(check(symbols_->hipGetDeviceCount(&count), "hipGetDeviceCount"));
  if (count == 0) return absl::UnavailableError(absl::StrCat(library_name_, " loaded but reports no AMD GPU"));
  ASSIGN_OR_RETURN(std::vector<std::string> archs, gpu_archs());
  // HIP numbers the runtime's GPU agents in topology order unless a *_VISIBLE_DEVICES variable
  // hides some; then only a machine whose GPUs share one architecture can be mapped.
  bool renumbered = std::getenv("HIP_VISIBLE_DEVICES") || std::getenv("ROCR_VISIBLE_DEVICES") ||
                    std::getenv("CUDA_VISIBLE_DEVICES");
  bool uniform = !archs.empty() && std::all_of(archs.begin(), archs.end(),
                                               [&](const std::string& a) { return a == archs[0]; });
  if (!uniform && (renumbered || static_cast<int>(archs.size()) != count)) {
    return absl::UnavailableError(absl::StrCat("cannot tell the architecture of each of ", count,
                                               " HIP devices from ", kKfdTopologyNodes));
  }
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    DeviceInfo info;
    info.index = i;
    char name[256] = {};
    RETURN_IF_ERROR(check(symbols_->hipDeviceGetName(name, sizeof(name) - 1, i), "hipDeviceGetName"));
    info.name = name;
    info.arch = uniform ? archs[0] : archs[i];
    devices.push_back(std::move(info));
  }
  return devices;
}

absl::StatusOr<void*> Driver::allocate(int device, size_t size) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  void* memory = nullptr;
  RETURN_IF_ERROR(check(symbols_->hipMalloc(&memory, size == 0 ? 1 : size),
                        absl::StrCat("hipMalloc of ", size, " bytes")));
  return memory;
}

void Driver::free(int device, void* memory) const {
  if (symbols_->hipSetDevice(device) == kHipSuccess) symbols_->hipFree(memory);
}

absl::Status Driver::upload(int device, void* dst, const void* src, size_t size) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  return check(symbols_->hipMemcpyHtoD(dst, src, size), "hipMemcpyHtoD");
}

absl::Status Driver::download(int device, void* dst, const void* src, size_t size) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  return check(symbols_->hipMemcpyDtoH(dst, src, size), "hipMemcpyDtoH");
}

absl::Status Driver::zero(int device, void* dst, size_t size) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  return check(symbols_->hipMemset(dst, 0, size), "hipMemset");
}

absl::StatusOr<void*> Driver::load_module(int device, std::string_view code_object) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  void* module = nullptr;
  RETURN_IF_ERROR(check(symbols_->hipModuleLoadData(&module, code_object.data()), "hipModuleLoadData"));
  return module;
}

void Driver::unload_module(int device, void* module) const {
  if (symbols_->hipSetDevice(device) == kHipSuccess) symbols_->hipModuleUnload(module);
}

absl::StatusOr<void*> Driver::kernel(void* module, const std::string& name) const {
  void* function = nullptr;
  RETURN_IF_ERROR(check(symbols_->hipModuleGetFunction(&function, module, name.c_str()),
                        absl::StrCat("hipModuleGetFunction ", name)));
  return function;
}

absl::Status Driver::launch(int device, void* kernel, const uint32_t grid[3], uint32_t threads,
                            void* stream, std::vector<uint8_t>& kernargs) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  size_t size = kernargs.size();
  void* extra[] = {kLaunchParamBufferPointer, kernargs.data(), kLaunchParamBufferSize, &size,
                   kLaunchParamEnd};
  return check(symbols_->hipModuleLaunchKernel(kernel, grid[0], grid[1], grid[2], threads, 1, 1, 0,
                                               stream, nullptr, extra),
               "hipModuleLaunchKernel");
}

absl::StatusOr<void*> Driver::create_stream(int device) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  void* stream = nullptr;
  RETURN_IF_ERROR(check(symbols_->hipStreamCreate(&stream), "hipStreamCreate"));
  return stream;
}

void Driver::destroy_stream(int device, void* stream) const {
  if (symbols_->hipSetDevice(device) == kHipSuccess) symbols_->hipStreamDestroy(stream);
}

absl::Status Driver::wait(int device, void* stream, std::chrono::milliseconds limit) const {
  RETURN_IF_ERROR(check(symbols_->hipSetDevice(device), "hipSetDevice"));
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    int error = symbols_->hipStreamQuery(stream);
    if (error != kHipErrorNotReady) return check(error, "kernel execution (hipStreamQuery)");
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("hip stream did not finish within ", limit.count(),
                                                      " ms (TILERT_SYNC_TIMEOUT_MS)"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::chrono::milliseconds sync_timeout() {
  const char* text = std::getenv("TILERT_SYNC_TIMEOUT_MS");
  if (text != nullptr) {
    char* end = nullptr;
    long long value = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && value > 0) return std::chrono::milliseconds(value);
  }
  return std::chrono::milliseconds(10000);
}

void KernargBuilder::add(const void* value, size_t size) {
  size_t offset = (bytes_.size() + size - 1) / size * size;
  bytes_.resize(offset + size);
  std::memcpy(bytes_.data() + offset, value, size);
}

std::vector<uint8_t> KernargBuilder::finish(size_t segment_size) {
  if (bytes_.size() < segment_size) bytes_.resize(segment_size);
  return std::move(bytes_);
}

}  // namespace tilert::hip
