// Loading libcuda, resolving the dispatch table through cuGetProcAddress, turning CUresult into
// absl::Status, and listing devices.
#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cuda/driver_api.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

// The driver ABI the rows of cuda_symbols.def are resolved for (CUDA 12.0).
constexpr int kRequestedApiVersion = 12000;

// cuGetProcAddress as exported: _v2 (CUDA 12.0+) reports why a symbol is missing; the original
// lacks the last argument. Declared here rather than taken from cuda.h, whose macro maps the
// plain name to one of them depending on the header's version.
using GetProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);
using GetProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

}  // namespace

absl::StatusOr<std::string> ptx_target_name(const DeviceInfo& info) {
  if (info.compute_major == 9 && info.compute_minor == 0) return std::string("ptx:sm_90a");
  if (info.compute_major >= 8) return std::string("ptx:sm_80");
  return absl::UnavailableError(absl::StrCat("compute capability ", info.compute_major, ".", info.compute_minor,
                                             " is below 8.0"));
}

std::vector<std::string> default_library_names() { return {"libcuda.so.1", "libcuda.so"}; }

Driver::Driver(void* handle, std::string library_name)
    : handle_(handle), library_name_(std::move(library_name)), api_(new DriverApi) {}

Driver::~Driver() {
  if (handle_ != nullptr) dlclose(handle_);
}

const DriverApi& api(const Driver& driver) { return *driver.api_; }

absl::StatusOr<std::shared_ptr<Driver>> Driver::load(const std::vector<std::string>& library_names) {
  void* handle = nullptr;
  std::string loaded;
  for (const std::string& name : library_names) {
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      loaded = name;
      break;
    }
  }
  if (handle == nullptr)
    return absl::UnavailableError(absl::StrCat(
        library_names.empty() ? "libcuda.so.1" : library_names.front(),
        " not found: no NVIDIA driver (tried ", absl::StrJoin(library_names, ", "), ")"));
  std::shared_ptr<Driver> driver(new Driver(handle, loaded));

  auto v2 = reinterpret_cast<GetProcAddressV2>(dlsym(handle, "cuGetProcAddress_v2"));
  auto v1 = reinterpret_cast<GetProcAddressV1>(dlsym(handle, "cuGetProcAddress"));
  if (v2 == nullptr && v1 == nullptr)
    return absl::UnavailableError(absl::StrCat(
        loaded, " has no cuGetProcAddress: the NVIDIA driver is older than CUDA 12"));
  auto resolve = [&](const char* name, void** slot, bool required) -> absl::Status {
    CUresult r = v2 != nullptr ? v2(name, slot, kRequestedApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, nullptr)
                               : v1(name, slot, kRequestedApiVersion, CU_GET_PROC_ADDRESS_DEFAULT);
    if (r != CUDA_SUCCESS || *slot == nullptr) {
      *slot = nullptr;
      if (required)
        return absl::UnavailableError(absl::StrCat(
            loaded, " lacks ", name, " (CUDA driver API ", kRequestedApiVersion,
            "): the NVIDIA driver is too old"));
    }
    return absl::OkStatus();
  };
  DriverApi& table = *driver->api_;
#define TILERT_CU(name, need) \
  RETURN_IF_ERROR(resolve(#name, reinterpret_cast<void**>(&table.name), #need[0] == 'R'));
#include "backends/cuda/cuda_symbols.def"
#undef TILERT_CU

  CU_RETURN_IF_ERROR(*driver, table.cuInit(0), "cuInit");
  CU_RETURN_IF_ERROR(*driver, table.cuDriverGetVersion(&driver->version_), "cuDriverGetVersion");
  if (driver->version_ < kRequestedApiVersion)
    return absl::UnavailableError(absl::StrCat("NVIDIA driver supports CUDA ", driver->version_ / 1000,
                                               ".", driver->version_ % 1000 / 10,
                                               "; tilert needs CUDA 12.0 or newer"));
  return driver;
}

absl::Status check(const Driver& driver, CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const DriverApi& cu = api(driver);
  const char* name = nullptr;
  const char* description = nullptr;
  if (cu.cuGetErrorName != nullptr) cu.cuGetErrorName(result, &name);
  if (cu.cuGetErrorString != nullptr) cu.cuGetErrorString(result, &description);
  std::string message = absl::StrCat(av(what), ": ", name ? name : absl::StrCat("CUresult(", result, ")"),
                                     description ? absl::StrCat(" (", description, ")") : "");
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::ResourceExhaustedError(message);
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return absl::DeadlineExceededError(message);
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_FAILED:
      return absl::FailedPreconditionError(message);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return absl::UnavailableError(message);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_PTX:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::vector<DeviceInfo>> Driver::devices() const {
  const DriverApi& cu = *api_;
  int count = 0;
  CU_RETURN_IF_ERROR(*this, cu.cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device;
    CU_RETURN_IF_ERROR(*this, cu.cuDeviceGet(&device, ordinal), absl::StrCat("cuDeviceGet(", ordinal, ")"));
    DeviceInfo info;
    info.ordinal = ordinal;
    info.driver_version = version_;
    char name[256] = {};
    CU_RETURN_IF_ERROR(*this, cu.cuDeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName");
    info.name = name;
    auto attribute = [&](CUdevice_attribute a, const char* what, int* out) {
      return check(*this, cu.cuDeviceGetAttribute(out, a, device),
                   absl::StrCat("cuDeviceGetAttribute(", what, ")"));
    };
    int shared = 0;
    RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major",
                              &info.compute_major));
    RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor",
                              &info.compute_minor));
    RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count",
                              &info.multiprocessors));
    RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                              "max shared memory per block opt-in", &shared));
    info.shared_memory_optin = shared;
    devices.push_back(std::move(info));
  }
  return devices;
}

}  // namespace tilert::cuda
