#include "backends/vulkan/driver.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"

namespace tilert::vulkan {

namespace {

constexpr bool REQUIRED = true;
constexpr bool OPTIONAL = false;

// Stores `address` into `slot` (a PFN_vk* member), reporting a REQUIRED entry that is missing.
template <typename Pfn>
void store(Pfn* slot, PFN_vkVoidFunction address, const char* name, bool required,
           std::vector<std::string>* missing) {
  *slot = reinterpret_cast<Pfn>(address);
  if (address == nullptr && required) missing->push_back(name);
}

absl::Status missing_entries(std::string_view level, const std::vector<std::string>& missing) {
  return absl::UnavailableError(absl::StrCat("unavailable: the Vulkan driver lacks ", av(level),
                                             " entry points ", absl::StrJoin(missing, ", ")));
}

}  // namespace

std::vector<std::string> default_library_names() { return {"libvulkan.so.1", "libvulkan.so"}; }

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
  if (handle == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("unavailable: tried ", absl::StrJoin(library_names, ", ")));
  }
  std::shared_ptr<Driver> driver(new Driver(handle, loaded));
  Dispatch& table = driver->global_;
  table.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
  if (table.vkGetInstanceProcAddr == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("unavailable: ", loaded, " does not export vkGetInstanceProcAddr"));
  }
  std::vector<std::string> missing;
#define TILERT_VK_GLOBAL(name, need) \
  store(&table.name, table.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name), #name, need, &missing);
#define TILERT_VK_INSTANCE(name, need)
#define TILERT_VK_DEVICE(name, need)
#include "backends/vulkan/vulkan_symbols.def"
#undef TILERT_VK_GLOBAL
#undef TILERT_VK_INSTANCE
#undef TILERT_VK_DEVICE
  if (!missing.empty()) return missing_entries("global", missing);
  return driver;
}

Driver::~Driver() { dlclose(handle_); }

absl::StatusOr<Dispatch> Driver::resolve_instance(VkInstance instance) const {
  Dispatch table = global_;
  std::vector<std::string> missing;
#define TILERT_VK_GLOBAL(name, need)
#define TILERT_VK_INSTANCE(name, need) \
  store(&table.name, table.vkGetInstanceProcAddr(instance, #name), #name, need, &missing);
#define TILERT_VK_DEVICE(name, need)
#include "backends/vulkan/vulkan_symbols.def"
#undef TILERT_VK_GLOBAL
#undef TILERT_VK_INSTANCE
#undef TILERT_VK_DEVICE
  if (!missing.empty()) return missing_entries("instance", missing);
  return table;
}

absl::StatusOr<Dispatch> resolve_device(const Dispatch& instance_table, VkDevice device) {
  Dispatch table = instance_table;
  std::vector<std::string> missing;
#define TILERT_VK_GLOBAL(name, need)
#define TILERT_VK_INSTANCE(name, need)
#define TILERT_VK_DEVICE(name, need) \
  store(&table.name, table.vkGetDeviceProcAddr(device, #name), #name, need, &missing);
#include "backends/vulkan/vulkan_symbols.def"
#undef TILERT_VK_GLOBAL
#undef TILERT_VK_INSTANCE
#undef TILERT_VK_DEVICE
  if (!missing.empty()) return missing_entries("device", missing);
  return table;
}

std::string result_name(VkResult result) {
  switch (result) {
#define TILERT_VK_RESULT(code) \
  case code:                   \
    return #code;
    TILERT_VK_RESULT(VK_SUCCESS)
    TILERT_VK_RESULT(VK_NOT_READY)
    TILERT_VK_RESULT(VK_TIMEOUT)
    TILERT_VK_RESULT(VK_INCOMPLETE)
    TILERT_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    TILERT_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TILERT_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    TILERT_VK_RESULT(VK_ERROR_DEVICE_LOST)
    TILERT_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    TILERT_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    TILERT_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    TILERT_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    TILERT_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    TILERT_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    TILERT_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TILERT_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    TILERT_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    TILERT_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
    TILERT_VK_RESULT(VK_ERROR_UNKNOWN)
#undef TILERT_VK_RESULT
    default:
      return absl::StrCat("VkResult(", static_cast<int>(result), ")");
  }
}

absl::Status check(VkResult result, std::string_view what) {
  if (result == VK_SUCCESS) return absl::OkStatus();
  std::string message = absl::StrCat(av(what), ": ", result_name(result));
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return absl::ResourceExhaustedError(message);
    case VK_ERROR_DEVICE_LOST:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace tilert::vulkan
