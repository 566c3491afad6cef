#include "backends/vulkan/memory.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::vulkan {

namespace {

constexpr VkBufferUsageFlags kStorageUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// The first memory type allowed by `type_bits` that has all of `required`, preferring one that
// also has all of `preferred`.
std::optional<uint32_t> pick_memory_type(const VkPhysicalDeviceMemoryProperties& memory,
                                         uint32_t type_bits, VkMemoryPropertyFlags required,
                                         VkMemoryPropertyFlags preferred) {
  std::optional<uint32_t> fallback;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) == 0) continue;
    VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (!fallback) fallback = i;
  }
  return fallback;
}

// A buffer with its own memory; the pieces Buffer and staging copies share.
struct RawBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkMemoryPropertyFlags flags = 0;
};

void destroy_raw(const Device& device, const RawBuffer& raw) {
  const Dispatch& vk = device.vk();
  if (raw.buffer != VK_NULL_HANDLE) vk.vkDestroyBuffer(device.handle(), raw.buffer, nullptr);
  if (raw.memory != VK_NULL_HANDLE) vk.vkFreeMemory(device.handle(), raw.memory, nullptr);
}

absl::StatusOr<RawBuffer> create_raw(const Device& device, size_t size, VkBufferUsageFlags usage,
                                     VkMemoryPropertyFlags required,
                                     VkMemoryPropertyFlags preferred) {
  const Dispatch& vk = device.vk();
  RawBuffer raw;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  // Vulkan forbids empty buffers; whole words let vkCmdFillBuffer zero every byte.
  info.size = std::max<size_t>(4, (size + 3) / 4 * 4);
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VK_RETURN_IF_ERROR(vk.vkCreateBuffer(device.handle(), &info, nullptr, &raw.buffer),
                     absl::StrCat("vkCreateBuffer(", size, " bytes)"));
  VkMemoryRequirements needs{};
  vk.vkGetBufferMemoryRequirements(device.handle(), raw.buffer, &needs);
  std::optional<uint32_t> type =
      pick_memory_type(device.memory_properties(), needs.memoryTypeBits, required, preferred);
  if (!type) {
    destroy_raw(device, raw);
    return absl::ResourceExhaustedError(
        absl::StrCat("no Vulkan memory type fits a buffer of ", size, " bytes on ",
                     device.info().name));
  }
  raw.flags = device.memory_properties().memoryTypes[*type].propertyFlags;
  VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocate.allocationSize = needs.size;
  allocate.memoryTypeIndex = *type;
  absl::Status status = check(vk.vkAllocateMemory(device.handle(), &allocate, nullptr, &raw.memory),
                              absl::StrCat("vkAllocateMemory(", size, " bytes)"));
  if (status.ok()) {
    status = check(vk.vkBindBufferMemory(device.handle(), raw.buffer, raw.memory, 0),
                   "vkBindBufferMemory");
  }
  if (!status.ok()) {
    destroy_raw(device, raw);
    return status;
  }
  return raw;
}

// Copies between `device_buffer` and a temporary host-visible buffer; `to_device` picks the way.
absl::Status staged_copy(Device& device, VkBuffer device_buffer, size_t offset, void* host,
                         size_t size, bool to_device) {
  const Dispatch& vk = device.vk();
  ASSIGN_OR_RETURN(RawBuffer staging,
                   create_raw(device, size, kStorageUsage,
                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              0));
  void* mapped = nullptr;
  absl::Status status =
      check(vk.vkMapMemory(device.handle(), staging.memory, 0, VK_WHOLE_SIZE, 0, &mapped),
            "vkMapMemory(staging)");
  if (status.ok() && to_device) std::memcpy(mapped, host, size);
  if (status.ok()) {
    status = device.submit_and_wait(
        [&](VkCommandBuffer commands) {
          VkBufferCopy region{};
          region.size = size;
          if (to_device) {
            region.dstOffset = offset;
            vk.vkCmdCopyBuffer(commands, staging.buffer, device_buffer, 1, &region);
          } else {
            region.srcOffset = offset;
            vk.vkCmdCopyBuffer(commands, device_buffer, staging.buffer, 1, &region);
          }
        },
        kTransferTimeout, to_device ? "upload" : "download");
  }
  if (status.ok() && !to_device) std::memcpy(host, mapped, size);
  // After a timeout the copy may still be reading or writing the staging buffer: keep it.
  if (absl::IsDeadlineExceeded(status)) return status;
  if (mapped != nullptr) vk.vkUnmapMemory(device.handle(), staging.memory);
  destroy_raw(device, staging);
  return status;
}

}  // namespace

namespace {

// Fills a buffer that is not mapped with zeros on the queue (no staging buffer).
absl::Status zero_on_device(Device& device, VkBuffer buffer) {
  const Dispatch& vk = device.vk();
  return device.submit_and_wait(
      [&](VkCommandBuffer commands) {
        vk.vkCmdFillBuffer(commands, buffer, 0, VK_WHOLE_SIZE, 0);
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                0, 1, &barrier, 0, nullptr, 0, nullptr);
      },
      kTransferTimeout, "zeroing a buffer");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::create(std::shared_ptr<Device> device, size_t size,
                                                       bool force_staging) {
  RETURN_IF_ERROR(device->check_usable());
  ASSIGN_OR_RETURN(RawBuffer raw, create_raw(*device, size, kStorageUsage,
                                             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0));
  std::unique_ptr<Buffer> buffer(new Buffer());
  buffer->device_ = std::move(device);
  buffer->size_ = size;
  buffer->buffer_ = raw.buffer;
  buffer->memory_ = raw.memory;
  const Dispatch& vk = buffer->device_->vk();
  VkDevice handle = buffer->device_->handle();
  if ((raw.flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0 && !force_staging) {
    VK_RETURN_IF_ERROR(vk.vkMapMemory(handle, raw.memory, 0, VK_WHOLE_SIZE, 0, &buffer->mapped_),
                       "vkMapMemory");
    buffer->coherent_ = (raw.flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  }
  // New buffers read as zero, as on the cpu backend, so results never depend on stale memory.
  if (buffer->mapped_ == nullptr) {
    RETURN_IF_ERROR(zero_on_device(*buffer->device_, buffer->buffer_));
  } else {
    std::vector<uint8_t> zeros(size);
    RETURN_IF_ERROR(buffer->upload(0, zeros.data(), size));
  }
  return buffer;
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::create_host_visible(std::shared_ptr<Device> device,
                                                                    size_t size) {
  RETURN_IF_ERROR(device->check_usable());
  ASSIGN_OR_RETURN(RawBuffer raw,
                   create_raw(*device, size, kStorageUsage,
                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT));
  std::unique_ptr<Buffer> buffer(new Buffer());
  buffer->device_ = std::move(device);
  buffer->size_ = size;
  buffer->buffer_ = raw.buffer;
  buffer->memory_ = raw.memory;
  buffer->coherent_ = true;
  VK_RETURN_IF_ERROR(buffer->device_->vk().vkMapMemory(buffer->device_->handle(), raw.memory, 0,
                                                       VK_WHOLE_SIZE, 0, &buffer->mapped_),
                     "vkMapMemory");
  std::memset(buffer->mapped_, 0, size);
  return buffer;
}

Buffer::~Buffer() {
  const Dispatch& vk = device_->vk();
  if (!device_->check_usable().ok()) device_->wait_idle();  // a timed-out kernel may still use it
  if (mapped_ != nullptr) vk.vkUnmapMemory(device_->handle(), memory_);
  destroy_raw(*device_, RawBuffer{buffer_, memory_, 0});
}

absl::Status Buffer::check_range(size_t offset, size_t size, std::string_view what) const {
  if (offset > size_ || size > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrCat(av(what), " of ", size, " bytes at offset ",
                                                   offset, " exceeds the buffer's ", size_,
                                                   " bytes"));
  }
  return device_->check_usable();
}

absl::Status Buffer::upload(size_t offset, const void* src, size_t size) {
  RETURN_IF_ERROR(check_range(offset, size, "upload"));
  if (size == 0) return absl::OkStatus();
  if (mapped_ == nullptr) {
    return staged_copy(*device_, buffer_, offset, const_cast<void*>(src), size, true);
  }
  std::memcpy(static_cast<uint8_t*>(mapped_) + offset, src, size);
  if (coherent_) return absl::OkStatus();
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = memory_;
  range.size = VK_WHOLE_SIZE;
  return check(device_->vk().vkFlushMappedMemoryRanges(device_->handle(), 1, &range),
               "vkFlushMappedMemoryRanges");
}

absl::Status Buffer::download(size_t offset, void* dst, size_t size) {
  RETURN_IF_ERROR(check_range(offset, size, "download"));
  if (size == 0) return absl::OkStatus();
  if (mapped_ == nullptr) return staged_copy(*device_, buffer_, offset, dst, size, false);
  if (!coherent_) {
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    VK_RETURN_IF_ERROR(
        device_->vk().vkInvalidateMappedMemoryRanges(device_->handle(), 1, &range),
        "vkInvalidateMappedMemoryRanges");
  }
  std::memcpy(dst, static_cast<const uint8_t*>(mapped_) + offset, size);
  return absl::OkStatus();
}

}  // namespace tilert::vulkan
