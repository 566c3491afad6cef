// The vulkan backend row: any Vulkan compute device, through libvulkan loaded at run time
// (backends/vulkan). Devices are enumerated and buffers work; kernels cannot run yet because
// there is no SPIR-V lowerer, so module loads and launches say so (Unimplemented) and the
// devices are marked as unable to run kernels, which keeps `auto` on a device that can.
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "backends/vulkan/device.h"
#include "backends/vulkan/driver.h"
#include "backends/vulkan/memory.h"
#include "ir/status.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {

// libvulkan and one instance for the whole process, created on first use. Never destroyed:
// tearing an instance down during static destruction races with the driver's own teardown.
struct VulkanSystem {
  std::shared_ptr<vulkan::Instance> instance;
  std::vector<vulkan::PhysicalDeviceInfo> devices;
  absl::Status status;  // why there are no devices, when there are none
};

VulkanSystem probe_vulkan() {
  VulkanSystem system;
  absl::StatusOr<std::shared_ptr<vulkan::Driver>> driver = vulkan::Driver::load();
  if (!driver.ok()) {
    system.status = driver.status();
    return system;
  }
  absl::StatusOr<std::shared_ptr<vulkan::Instance>> instance = vulkan::Instance::create(*driver);
  if (!instance.ok()) {
    system.status = instance.status();
    return system;
  }
  system.instance = *instance;
  absl::StatusOr<std::vector<vulkan::PhysicalDeviceInfo>> devices =
      system.instance->physical_devices();
  if (!devices.ok()) {
    system.status = devices.status();
  } else if (devices->empty()) {
    system.status = absl::UnavailableError(
        absl::StrCat("no Vulkan device with a compute queue (", (*driver)->library_name(),
                     " loaded; is an ICD such as mesa-vulkan-drivers installed?)"));
  } else {
    system.devices = std::move(*devices);
  }
  return system;
}

const VulkanSystem& vulkan_system() {
  static const VulkanSystem* system = new VulkanSystem(probe_vulkan());
  return *system;
}

// A physical device of one context; its logical device is created on first use.
struct VulkanDeviceState {
  vulkan::PhysicalDeviceInfo info;
  std::mutex mutex;
  std::shared_ptr<vulkan::Device> device;

  absl::StatusOr<std::shared_ptr<vulkan::Device>> logical_device() {
    std::lock_guard<std::mutex> lock(mutex);
    if (device == nullptr) {
      ASSIGN_OR_RETURN(device, vulkan::Device::create(vulkan_system().instance, info));
    }
    return device;
  }
};

VulkanDeviceState& state_of(const DeviceRecord& record) {
  return *static_cast<VulkanDeviceState*>(record.state.get());
}

absl::StatusOr<std::vector<DeviceRecord>> enumerate_vulkan_devices() {
  const VulkanSystem& system = vulkan_system();
  if (system.devices.empty()) return system.status;
  std::vector<DeviceRecord> records;
  for (size_t i = 0; i < system.devices.size(); ++i) {
    const vulkan::PhysicalDeviceInfo& info = system.devices[i];
    DeviceRecord record;
    record.kind = TILERT_DEVICE_VULKAN;
    record.index = static_cast<int32_t>(i);
    record.name = info.name;
    record.driver = absl::StrCat(info.driver_name.empty() ? "Vulkan driver" : info.driver_name,
                                 info.driver_info.empty() ? "" : " ", info.driver_info,
                                 ", Vulkan ", info.api_version_string());
    record.features = info.features_string();
    record.shared_memory_limit = info.max_shared_memory_bytes;
    record.cannot_run_kernels = "no SPIR-V lowerer yet";
    auto state = std::make_shared<VulkanDeviceState>();
    state->info = info;
    record.state = std::move(state);
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<void*> vulkan_buffer_alloc(const DeviceRecord& device, size_t size) {
  ASSIGN_OR_RETURN(std::shared_ptr<vulkan::Device> logical, state_of(device).logical_device());
  ASSIGN_OR_RETURN(std::unique_ptr<vulkan::Buffer> buffer,
                   vulkan::Buffer::create(std::move(logical), size));
  return static_cast<void*>(buffer.release());
}

void vulkan_buffer_free(const DeviceRecord&, void* memory) {
  delete static_cast<vulkan::Buffer*>(memory);
}

absl::Status vulkan_buffer_upload(const DeviceRecord&, void* memory, size_t offset,
                                  const void* src, size_t size) {
  return static_cast<vulkan::Buffer*>(memory)->upload(offset, src, size);
}

absl::Status vulkan_buffer_download(const DeviceRecord&, const void* memory, size_t offset,
                                    void* dst, size_t size) {
  // Downloading changes no contents; Buffer::download is non-const only for its staging copy.
  return static_cast<vulkan::Buffer*>(const_cast<void*>(memory))->download(offset, dst, size);
}

absl::Status no_lowerer(const Kernel& kernel) {
  return absl::UnimplementedError(
      absl::StrCat("no SPIR-V lowerer for kernel ", kernel.name, " yet"));
}

absl::StatusOr<std::shared_ptr<void>> vulkan_module_prepare(const DeviceRecord&,
                                                            const Module& module) {
  if (module.kernels.empty()) return std::shared_ptr<void>();
  return no_lowerer(module.kernels.front());
}

absl::StatusOr<std::shared_ptr<void>> vulkan_stream_create(const DeviceRecord&) {
  return std::shared_ptr<void>();
}

absl::Status vulkan_launch(const DeviceRecord&, void*, const LaunchRequest& request) {
  return no_lowerer(request.module->kernels[request.kernel_index]);
}

// Launches never start, so there is nothing to wait for.
absl::Status vulkan_sync(const DeviceRecord&, void*) { return absl::OkStatus(); }

}  // namespace

extern const Backend kVulkanBackend;
const Backend kVulkanBackend = {
    .name = "vulkan",
    .kind = TILERT_DEVICE_VULKAN,
    .enumerate = enumerate_vulkan_devices,
    .buffer_alloc = vulkan_buffer_alloc,
    .buffer_free = vulkan_buffer_free,
    .buffer_upload = vulkan_buffer_upload,
    .buffer_download = vulkan_buffer_download,
    .module_prepare = vulkan_module_prepare,
    .stream_create = vulkan_stream_create,
    .launch = vulkan_launch,
    .sync = vulkan_sync,
};

}  // namespace tilert::runtime
