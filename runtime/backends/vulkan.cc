// The vulkan backend row: any Vulkan compute device. Its lowerer and driver bindings are not
// part of this build, so the row only reports why no vulkan device can be used; no driver
// library is loaded.
#include "absl/status/status.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {
absl::StatusOr<std::vector<DeviceRecord>> enumerate_vulkan_devices() {
  return absl::UnavailableError("no vulkan backend in this build yet");
}
}  // namespace

extern const Backend kVulkanBackend;
const Backend kVulkanBackend = {
    .name = "vulkan",
    .kind = TILERT_DEVICE_VULKAN,
    .enumerate = enumerate_vulkan_devices,
};

}  // namespace tilert::runtime
