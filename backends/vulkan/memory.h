// Storage buffers on a Vulkan device. Memory is device-local; when that memory is also
// host-visible (integrated GPUs, lavapipe) uploads and downloads map it directly, otherwise they
// go through a host-visible staging buffer and a copy on the compute queue. Small records the
// host writes and reads around every launch (status records) live in host-visible memory
// instead, so a launch needs no transfer of its own.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/vulkan/device.h"

namespace tilert::vulkan {

// How long a transfer may take before the device is declared lost.
inline constexpr std::chrono::milliseconds kTransferTimeout{10000};

class Buffer {
 public:
  // `force_staging` takes the staging path even when the memory is host-visible (tests use it
  // to exercise that path on lavapipe).
  static absl::StatusOr<std::unique_ptr<Buffer>> create(std::shared_ptr<Device> device,
                                                        size_t size, bool force_staging = false);
  // Mapped memory the host reads and writes directly (device-local too where the device has
  // such memory), zeroed. For a few words read after each launch; kernels reach it over the bus
  // on discrete GPUs, so bulk data does not belong there.
  static absl::StatusOr<std::unique_ptr<Buffer>> create_host_visible(std::shared_ptr<Device> device,
                                                                     size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // The caller keeps [offset, offset + size) inside the buffer; outside it is InvalidArgument.
  absl::Status upload(size_t offset, const void* src, size_t size);
  absl::Status download(size_t offset, void* dst, size_t size);

  VkBuffer handle() const { return buffer_; }
  size_t size() const { return size_; }
  bool host_visible() const { return mapped_ != nullptr; }

 private:
  Buffer() = default;
  absl::Status check_range(size_t offset, size_t size, std::string_view what) const;

  std::shared_ptr<Device> device_;
  size_t size_ = 0;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;     // set when the memory is host-visible and mapped
  bool coherent_ = false;      // mapped writes need no flush / invalidate
};

}  // namespace tilert::vulkan
