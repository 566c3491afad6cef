// Compute pipelines from SPIR-V words: a descriptor set of N storage buffers (bindings 0..N-1 of
// set 0) plus push constants, built through the device's VkPipelineCache, and dispatched with a
// time limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/vulkan/device.h"
#include "backends/vulkan/memory.h"

namespace tilert::vulkan {

struct PipelineDescription {
  std::string kernel_name;          // for messages: "kernel NAME: ..."
  std::span<const uint32_t> spirv;  // a whole module
  std::string entry_point = "main";
  uint32_t storage_buffers = 0;
  uint32_t push_constant_bytes = 0;  // a multiple of 4
  // Values of the module's 32-bit specialization constants: (SpecId, value word).
  std::vector<std::pair<uint32_t, uint32_t>> specialization;
  // Ask the driver to keep what it compiled for statistics() (where the device can report it).
  bool capture_statistics = false;
};

// One figure the driver reports about a compiled pipeline: "Register Count" = "128".
struct PipelineStatistic {
  std::string executable;  // the executable's name ("Compute Shader" and the like)
  std::string name;
  std::string value;
  std::string description;
};

// A form of the compiled code the driver chose to show (an intermediate or machine code listing).
struct PipelineRepresentation {
  std::string executable;
  std::string name;
  std::string description;
  bool is_text = false;
  std::string data;
};

struct GridSize {
  uint32_t x = 1, y = 1, z = 1;
};

class ComputePipeline {
 public:
  static absl::StatusOr<std::unique_ptr<ComputePipeline>> create(std::shared_ptr<Device> device,
                                                                 const PipelineDescription& description);
  ~ComputePipeline();
  ComputePipeline(const ComputePipeline&) = delete;
  ComputePipeline& operator=(const ComputePipeline&) = delete;

  // Binds `buffers` (one per storage binding) and `push_constants` (exactly
  // push_constant_bytes), dispatches `grid` workgroups and waits at most `timeout`. Past it:
  // DeadlineExceeded "kernel NAME: dispatch did not finish within N ms", and the device is lost.
  absl::Status dispatch(std::span<Buffer* const> buffers, std::span<const std::byte> push_constants,
                        GridSize grid, std::chrono::milliseconds timeout);

  const std::string& kernel_name() const { return kernel_name_; }
  // How long the last dispatch ran on the device, between timestamps written before and after
  // it (seconds; 0 where the queue has no timestamps or nothing ran yet). Launch overhead on the
  // host is not in it.
  double last_device_seconds() const { return last_device_seconds_; }
  // What the driver compiled: its statistics for each executable of the pipeline
  // (VK_KHR_pipeline_executable_properties). FailedPrecondition where the pipeline was not
  // created with capture_statistics or the device cannot report them.
  absl::StatusOr<std::vector<PipelineStatistic>> statistics() const;
  // The driver's internal representations of the same executables, where it offers any.
  absl::StatusOr<std::vector<PipelineRepresentation>> internal_representations() const;

 private:
  ComputePipeline() = default;
  // Names of the pipeline's executables; FailedPrecondition unless statistics were captured.
  absl::StatusOr<std::vector<std::string>> executable_names() const;
  VkPipelineExecutableInfoKHR executable_info(uint32_t index) const;
  std::shared_ptr<Device> device_;
  std::string kernel_name_;
  uint32_t storage_buffers_ = 0;
  uint32_t push_constant_bytes_ = 0;
  bool statistics_captured_ = false;
  VkShaderModule shader_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;     // rewritten by each dispatch
  VkQueryPool timestamps_ = VK_NULL_HANDLE;  // two: before and after the dispatch
  double last_device_seconds_ = 0;
  std::mutex dispatch_mutex_;  // one dispatch at a time uses the descriptor set and the queries
};

}  // namespace tilert::vulkan
