// The Vulkan API loaded at run time: libvulkan is dlopen'd, never linked, so one build of tilert
// runs on machines without it and says why the vulkan backend is unavailable there.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES  // every call goes through a Dispatch table, never a linked symbol
#endif
#include <vulkan/vulkan.h>

#include "backends/vulkan/khr_cooperative_matrix.h"  // for headers that predate the extension
#include "backends/vulkan/nv_cooperative_matrix2.h"   // likewise

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tilert::vulkan {

// One function pointer per row of vulkan_symbols.def; null until resolved (or when OPTIONAL and
// absent). Global and instance rows are shared by all devices of an instance; each logical
// device copies the table and resolves its device rows for itself.
struct Dispatch {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define TILERT_VK_GLOBAL(name, need) PFN_##name name = nullptr;
#define TILERT_VK_INSTANCE(name, need) PFN_##name name = nullptr;
#define TILERT_VK_DEVICE(name, need) PFN_##name name = nullptr;
#include "backends/vulkan/vulkan_symbols.def"
#undef TILERT_VK_GLOBAL
#undef TILERT_VK_INSTANCE
#undef TILERT_VK_DEVICE
};

// The library names tried in order when none are given.
std::vector<std::string> default_library_names();

// An open libvulkan with its global entry points resolved. Closes the library when the last
// holder lets go; instances and devices hold it.
class Driver {
 public:
  // Opens the first of `library_names` that loads. None loading gives
  // Unavailable "unavailable: tried libvulkan.so.1, libvulkan.so"; a library lacking a REQUIRED
  // global entry point gives Unavailable naming it.
  static absl::StatusOr<std::shared_ptr<Driver>> load(
      const std::vector<std::string>& library_names = default_library_names());

  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const std::string& library_name() const { return library_name_; }
  const Dispatch& global() const { return global_; }

  // A copy of the global table with the instance rows resolved for `instance`.
  absl::StatusOr<Dispatch> resolve_instance(VkInstance instance) const;

 private:
  Driver(void* handle, std::string library_name) : handle_(handle), library_name_(std::move(library_name)) {}
  void* handle_;
  std::string library_name_;
  Dispatch global_;
};

// `instance_table` with the device rows resolved for `device`.
absl::StatusOr<Dispatch> resolve_device(const Dispatch& instance_table, VkDevice device);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", or "VkResult(-13)" for a code this build does not name.
std::string result_name(VkResult result);

// OK for VK_SUCCESS; otherwise "WHAT: VK_ERROR_..." with the matching absl code
// (ResourceExhausted for out-of-memory, Unavailable for a lost device, Internal otherwise).
absl::Status check(VkResult result, std::string_view what);

}  // namespace tilert::vulkan

// Early return on a failed Vulkan call, naming the call: VK_RETURN_IF_ERROR(vk.vkCreateFence(...),
// "vkCreateFence").
#define VK_RETURN_IF_ERROR(call, what) RETURN_IF_ERROR(::tilert::vulkan::check((call), (what)))
