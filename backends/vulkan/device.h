// Vulkan instances, physical devices as tilert describes them, and logical devices with one
// compute queue.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/vulkan/driver.h"

namespace tilert::vulkan {

// What one physical device offers to compute kernels.
struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  uint32_t index = 0;  // in vkEnumeratePhysicalDevices order
  std::string name;    // "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string driver_name;  // "llvmpipe"
  std::string driver_info;  // "Mesa 22.3.6 (LLVM 15.0.6)"
  uint32_t api_version = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t compute_queue_family = 0;
  // Timestamps on the compute queue: valid bits (0: none) and nanoseconds per tick.
  uint32_t timestamp_valid_bits = 0;
  float timestamp_period_ns = 0;

  uint32_t subgroup_size = 0;
  VkShaderStageFlags subgroup_stages = 0;
  VkSubgroupFeatureFlags subgroup_operations = 0;
  uint32_t max_shared_memory_bytes = 0;  // maxComputeSharedMemorySize
  uint32_t max_invocations = 0;          // maxComputeWorkGroupInvocations
  uint32_t max_push_constant_bytes = 0;

  bool shader_float16 = false;
  bool shader_int8 = false;
  bool storage_16bit = false;  // storageBuffer16BitAccess
  bool storage_8bit = false;   // storageBuffer8BitAccess
  bool vulkan_memory_model = false;    // vulkanMemoryModel (cooperative matrices need it)
  // VK_KHR_cooperative_matrix with its cooperativeMatrix feature, in compute shaders.
  bool cooperative_matrix = false;
  // Among its shapes (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR): 16x16x16 with A and B
  // of f16 (of bf16, with VK_KHR_shader_bfloat16 present), C and the result f32, subgroup scope.
  bool cooperative_matrix_16x16x16_f16 = false;
  bool cooperative_matrix_16x16x16_bf16 = false;
  // VK_KHR_shader_bfloat16 with shaderBFloat16Type and shaderBFloat16CooperativeMatrix: shaders
  // may declare bf16 cooperative matrices (SPV_KHR_bfloat16).
  bool bfloat16_cooperative_matrix = false;
  // VK_NV_cooperative_matrix2 with cooperativeMatrixWorkgroupScope and
  // cooperativeMatrixFlexibleDimensions: matrices held by a whole workgroup, of any multiple of a
  // shape's granularity up to flexible_matrix_max_dimension, staged by the driver through shared
  // memory it reserves (workgroup_matrix_reserved_shared_bytes, out of max_shared_memory_bytes).
  struct WorkgroupMatrixShape {
    uint32_t m = 0, n = 0, k = 0;  // granularity of M, N and K
    bool bfloat16 = false;         // A and B of bf16, else f16; C and the result f32
    uint32_t invocations = 0;      // the workgroup size the shape is for
  };
  bool workgroup_matrices = false;
  // cooperativeMatrixTensorAddressing too: loads and stores through tensor layouts, with reads
  // outside the tensor's dimensions clamped and writes outside them dropped.
  bool workgroup_matrix_tensor_addressing = false;
  uint32_t workgroup_matrix_max_invocations = 0;
  uint32_t workgroup_matrix_reserved_shared_bytes = 0;
  uint32_t flexible_matrix_max_dimension = 0;
  std::vector<WorkgroupMatrixShape> workgroup_matrix_shapes;
  bool shader_clock = false;           // VK_KHR_shader_clock
  bool subgroup_size_control = false;  // VK_EXT_subgroup_size_control
  // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo: the driver reports what
  // it compiled (registers, shared memory, ...) for pipelines created to capture it.
  bool pipeline_statistics = false;

  // "1.3.238"
  std::string api_version_string() const;
  // "subgroup 32, shared 48 KB, fp16, int8, storage16, storage8,
  //  cooperative-matrix 16x16x16 f16, clock, subgroup-size-control"
  std::string features_string() const;
};

// A VkInstance without layers, and the driver it came from.
class Instance {
 public:
  static absl::StatusOr<std::shared_ptr<Instance>> create(std::shared_ptr<Driver> driver);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // Every physical device with a compute queue, in the driver's order.
  absl::StatusOr<std::vector<PhysicalDeviceInfo>> physical_devices() const;

  const Dispatch& vk() const { return vk_; }
  VkInstance handle() const { return instance_; }

 private:
  Instance() = default;
  std::shared_ptr<Driver> driver_;
  VkInstance instance_ = VK_NULL_HANDLE;
  Dispatch vk_;
};

// A logical device with one compute queue and the features of its PhysicalDeviceInfo enabled.
// Once a submission times out the device is lost: its queue may still be busy with work tilert
// cannot cancel, so every later submission fails with the reason instead of queueing behind it.
class Device {
 public:
  static absl::StatusOr<std::shared_ptr<Device>> create(std::shared_ptr<Instance> instance,
                                                        const PhysicalDeviceInfo& info);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Dispatch& vk() const { return vk_; }
  VkDevice handle() const { return device_; }
  const PhysicalDeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }

  // Records commands with `record`, submits them and waits at most `timeout`. A timeout gives
  // DeadlineExceeded "WHAT did not finish within N ms" and marks the device lost.
  absl::Status submit_and_wait(const std::function<void(VkCommandBuffer)>& record,
                               std::chrono::milliseconds timeout, std::string_view what);

  // OK, or FailedPrecondition naming why the device was lost.
  absl::Status check_usable() const;

  // Blocks until the queue is idle; what a lost device's owners call before destroying anything
  // its unfinished work may still use.
  void wait_idle();

 private:
  Device() = default;
  absl::Status mark_lost(absl::Status why);

  std::shared_ptr<Instance> instance_;
  PhysicalDeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;  // signalled by each submission, reset before the next
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  Dispatch vk_;
  mutable std::mutex mutex_;  // guards the queue, the command pool and lost_
  absl::Status lost_;         // OK while usable
};

}  // namespace tilert::vulkan
