#include "backends/vulkan/pipeline.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::vulkan {

namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;

absl::Status check_spirv(const PipelineDescription& description) {
  if (description.spirv.size() < 5 || description.spirv[0] != kSpirvMagic) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", description.kernel_name, ": not a SPIR-V module (",
        description.spirv.size(), " words, expected the magic number and a 5-word header)"));
  }
  if (description.push_constant_bytes % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", description.kernel_name,
                                                   ": push constants of ",
                                                   description.push_constant_bytes,
                                                   " bytes are not a multiple of 4"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ComputePipeline>> ComputePipeline::create(
    std::shared_ptr<Device> device, const PipelineDescription& description) {
  RETURN_IF_ERROR(check_spirv(description));
  RETURN_IF_ERROR(device->check_usable());
  if (description.push_constant_bytes > device->info().max_push_constant_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", description.kernel_name, ": ", description.push_constant_bytes,
        " bytes of push constants exceed the device's ", device->info().max_push_constant_bytes));
  }
  std::unique_ptr<ComputePipeline> pipeline(new ComputePipeline());
  pipeline->device_ = device;
  pipeline->kernel_name_ = description.kernel_name;
  pipeline->storage_buffers_ = description.storage_buffers;
  pipeline->push_constant_bytes_ = description.push_constant_bytes;
  const Dispatch& vk = device->vk();
  VkDevice handle = device->handle();
  std::string where = absl::StrCat("kernel ", description.kernel_name, ": ");

  VkShaderModuleCreateInfo shader{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  shader.codeSize = description.spirv.size_bytes();
  shader.pCode = description.spirv.data();
  VK_RETURN_IF_ERROR(vk.vkCreateShaderModule(handle, &shader, nullptr, &pipeline->shader_),
                     where + "vkCreateShaderModule");

  std::vector<VkDescriptorSetLayoutBinding> bindings(description.storage_buffers);
  for (uint32_t i = 0; i < description.storage_buffers; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_layout.bindingCount = description.storage_buffers;
  set_layout.pBindings = bindings.data();
  VK_RETURN_IF_ERROR(
      vk.vkCreateDescriptorSetLayout(handle, &set_layout, nullptr, &pipeline->set_layout_),
      where + "vkCreateDescriptorSetLayout");

  VkPushConstantRange push{};
  push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  push.size = description.push_constant_bytes;
  VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &pipeline->set_layout_;
  layout.pushConstantRangeCount = description.push_constant_bytes > 0 ? 1 : 0;
  layout.pPushConstantRanges = &push;
  VK_RETURN_IF_ERROR(vk.vkCreatePipelineLayout(handle, &layout, nullptr, &pipeline->layout_),
                     where + "vkCreatePipelineLayout");

  VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  create.stage.module = pipeline->shader_;
  create.stage.pName = description.entry_point.c_str();
  create.layout = pipeline->layout_;
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  for (const auto& [id, value] : description.specialization) {
    entries.push_back({id, static_cast<uint32_t>(values.size() * 4), 4});
    values.push_back(value);
  }
  VkSpecializationInfo specialization{static_cast<uint32_t>(entries.size()), entries.data(), values.size() * 4,
                                      values.data()};
  if (!entries.empty()) create.stage.pSpecializationInfo = &specialization;
  pipeline->statistics_captured_ =
      description.capture_statistics && device->info().pipeline_statistics &&
      vk.vkGetPipelineExecutablePropertiesKHR != nullptr &&
      vk.vkGetPipelineExecutableStatisticsKHR != nullptr;
  if (pipeline->statistics_captured_) {
    create.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    if (vk.vkGetPipelineExecutableInternalRepresentationsKHR != nullptr)
      create.flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  }
  VK_RETURN_IF_ERROR(vk.vkCreateComputePipelines(handle, device->pipeline_cache(), 1, &create,
                                                 nullptr, &pipeline->pipeline_),
                     where + "vkCreateComputePipelines");
  // One descriptor set for every dispatch (creating a pool per dispatch cost tenths of a
  // millisecond on NVIDIA's driver).
  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 description.storage_buffers == 0 ? 1 : description.storage_buffers};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = 1;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &pool_size;
  VK_RETURN_IF_ERROR(vk.vkCreateDescriptorPool(handle, &pool_info, nullptr, &pipeline->pool_),
                     where + "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  allocate.descriptorPool = pipeline->pool_;
  allocate.descriptorSetCount = 1;
  allocate.pSetLayouts = &pipeline->set_layout_;
  VK_RETURN_IF_ERROR(vk.vkAllocateDescriptorSets(handle, &allocate, &pipeline->set_),
                     where + "vkAllocateDescriptorSets");
  if (device->info().timestamp_valid_bits > 0) {
    VkQueryPoolCreateInfo query{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query.queryCount = 2;
    VK_RETURN_IF_ERROR(vk.vkCreateQueryPool(handle, &query, nullptr, &pipeline->timestamps_),
                       where + "vkCreateQueryPool");
  }
  return pipeline;
}

ComputePipeline::~ComputePipeline() {
  const Dispatch& vk = device_->vk();
  VkDevice handle = device_->handle();
  if (!device_->check_usable().ok()) device_->wait_idle();  // a timed-out dispatch may still run
  if (timestamps_ != VK_NULL_HANDLE) vk.vkDestroyQueryPool(handle, timestamps_, nullptr);
  if (pool_ != VK_NULL_HANDLE) vk.vkDestroyDescriptorPool(handle, pool_, nullptr);
  if (pipeline_ != VK_NULL_HANDLE) vk.vkDestroyPipeline(handle, pipeline_, nullptr);
  if (layout_ != VK_NULL_HANDLE) vk.vkDestroyPipelineLayout(handle, layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vk.vkDestroyDescriptorSetLayout(handle, set_layout_, nullptr);
  if (shader_ != VK_NULL_HANDLE) vk.vkDestroyShaderModule(handle, shader_, nullptr);
}

namespace {

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
      return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
      return absl::StrCat(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
      return absl::StrCat(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
      return absl::StrCat(s.value.f64);
    default:
      return absl::StrCat("(format ", static_cast<int>(s.format), ")");
  }
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ComputePipeline::executable_names() const {
  const std::string where = absl::StrCat("kernel ", kernel_name_, ": ");
  if (!statistics_captured_) {
    return absl::FailedPreconditionError(absl::StrCat(
        where, device_->info().pipeline_statistics
                   ? "the pipeline was not created to capture statistics"
                   : "the device does not report pipeline statistics "
                     "(VK_KHR_pipeline_executable_properties)"));
  }
  const Dispatch& vk = device_->vk();
  VkPipelineInfoKHR pipeline_info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pipeline_info.pipeline = pipeline_;
  uint32_t count = 0;
  VK_RETURN_IF_ERROR(
      vk.vkGetPipelineExecutablePropertiesKHR(device_->handle(), &pipeline_info, &count, nullptr),
      where + "vkGetPipelineExecutablePropertiesKHR");
  std::vector<VkPipelineExecutablePropertiesKHR> executables(
      count, VkPipelineExecutablePropertiesKHR{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  VK_RETURN_IF_ERROR(vk.vkGetPipelineExecutablePropertiesKHR(device_->handle(), &pipeline_info,
                                                             &count, executables.data()),
                     where + "vkGetPipelineExecutablePropertiesKHR");
  std::vector<std::string> names;
  for (uint32_t e = 0; e < count; ++e) names.emplace_back(executables[e].name);
  return names;
}

VkPipelineExecutableInfoKHR ComputePipeline::executable_info(uint32_t index) const {
  VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  executable.pipeline = pipeline_;
  executable.executableIndex = index;
  return executable;
}

absl::StatusOr<std::vector<PipelineStatistic>> ComputePipeline::statistics() const {
  const std::string where = absl::StrCat("kernel ", kernel_name_, ": ");
  ASSIGN_OR_RETURN(std::vector<std::string> executables, executable_names());
  const Dispatch& vk = device_->vk();
  VkDevice handle = device_->handle();
  std::vector<PipelineStatistic> result;
  for (uint32_t e = 0; e < executables.size(); ++e) {
    const VkPipelineExecutableInfoKHR executable = executable_info(e);
    uint32_t n = 0;
    VK_RETURN_IF_ERROR(vk.vkGetPipelineExecutableStatisticsKHR(handle, &executable, &n, nullptr),
                       where + "vkGetPipelineExecutableStatisticsKHR");
    std::vector<VkPipelineExecutableStatisticKHR> stats(
        n, VkPipelineExecutableStatisticKHR{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    VK_RETURN_IF_ERROR(vk.vkGetPipelineExecutableStatisticsKHR(handle, &executable, &n, stats.data()),
                       where + "vkGetPipelineExecutableStatisticsKHR");
    for (uint32_t i = 0; i < n; ++i) {
      result.push_back({executables[e], stats[i].name, statistic_value(stats[i]), stats[i].description});
    }
  }
  return result;
}

absl::StatusOr<std::vector<PipelineRepresentation>> ComputePipeline::internal_representations() const {
  const std::string where = absl::StrCat("kernel ", kernel_name_, ": ");
  ASSIGN_OR_RETURN(std::vector<std::string> executables, executable_names());
  const Dispatch& vk = device_->vk();
  if (vk.vkGetPipelineExecutableInternalRepresentationsKHR == nullptr) {
    return absl::FailedPreconditionError(
        where + "the driver does not offer vkGetPipelineExecutableInternalRepresentationsKHR");
  }
  VkDevice handle = device_->handle();
  std::vector<PipelineRepresentation> result;
  for (uint32_t e = 0; e < executables.size(); ++e) {
    const VkPipelineExecutableInfoKHR executable = executable_info(e);
    uint32_t n = 0;
    VK_RETURN_IF_ERROR(
        vk.vkGetPipelineExecutableInternalRepresentationsKHR(handle, &executable, &n, nullptr),
        where + "vkGetPipelineExecutableInternalRepresentationsKHR");
    std::vector<VkPipelineExecutableInternalRepresentationKHR> reps(
        n, VkPipelineExecutableInternalRepresentationKHR{
               VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
    // First the sizes, then the data into buffers of those sizes.
    VK_RETURN_IF_ERROR(
        vk.vkGetPipelineExecutableInternalRepresentationsKHR(handle, &executable, &n, reps.data()),
        where + "vkGetPipelineExecutableInternalRepresentationsKHR");
    std::vector<std::string> data(n);
    for (uint32_t i = 0; i < n; ++i) {
      data[i].resize(reps[i].dataSize);
      reps[i].pData = data[i].data();
    }
    VkResult fetched =
        vk.vkGetPipelineExecutableInternalRepresentationsKHR(handle, &executable, &n, reps.data());
    if (fetched != VK_SUCCESS && fetched != VK_INCOMPLETE) {
      VK_RETURN_IF_ERROR(fetched, where + "vkGetPipelineExecutableInternalRepresentationsKHR");
    }
    for (uint32_t i = 0; i < n; ++i) {
      std::string& text = data[i];
      text.resize(reps[i].dataSize);
      if (reps[i].isText && !text.empty() && text.back() == '\0') text.pop_back();
      result.push_back({executables[e], reps[i].name, reps[i].description,
                        reps[i].isText == VK_TRUE, std::move(text)});
    }
  }
  return result;
}

absl::Status ComputePipeline::dispatch(std::span<Buffer* const> buffers,
                                       std::span<const std::byte> push_constants, GridSize grid,
                                       std::chrono::milliseconds timeout) {
  std::string where = absl::StrCat("kernel ", kernel_name_, ": ");
  if (buffers.size() != storage_buffers_) {
    return absl::InvalidArgumentError(absl::StrCat(where, "expected ", storage_buffers_,
                                                   " buffers, got ", buffers.size()));
  }
  if (push_constants.size() != push_constant_bytes_) {
    return absl::InvalidArgumentError(absl::StrCat(where, "expected ", push_constant_bytes_,
                                                   " bytes of push constants, got ",
                                                   push_constants.size()));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(where, "buffer ", i, " is null"));
    }
  }
  RETURN_IF_ERROR(device_->check_usable());
  std::lock_guard<std::mutex> lock(dispatch_mutex_);
  const Dispatch& vk = device_->vk();
  VkDevice handle = device_->handle();

  // The pipeline's one descriptor set: dispatches wait for completion and hold dispatch_mutex_,
  // so the set is never rewritten while a dispatch uses it (a timed-out one loses the device).
  VkDescriptorSet set = set_;
  absl::Status status = absl::OkStatus();
  if (status.ok()) {
    std::vector<VkDescriptorBufferInfo> infos(buffers.size());
    std::vector<VkWriteDescriptorSet> writes(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      infos[i].buffer = buffers[i]->handle();
      infos[i].range = VK_WHOLE_SIZE;
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = set;
      writes[i].dstBinding = static_cast<uint32_t>(i);
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    vk.vkUpdateDescriptorSets(handle, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                              nullptr);
    status = device_->submit_and_wait(
        [&](VkCommandBuffer commands) {
          vk.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
          vk.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set,
                                     0, nullptr);
          if (!push_constants.empty()) {
            vk.vkCmdPushConstants(commands, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                  static_cast<uint32_t>(push_constants.size()),
                                  push_constants.data());
          }
          if (timestamps_ != VK_NULL_HANDLE) {
            vk.vkCmdResetQueryPool(commands, timestamps_, 0, 2);
            vk.vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
          }
          vk.vkCmdDispatch(commands, grid.x, grid.y, grid.z);
          if (timestamps_ != VK_NULL_HANDLE)
            vk.vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
          // Make the kernel's writes visible to mapped reads and later transfers.
          VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
          barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
          barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
          vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                                  1, &barrier, 0, nullptr, 0, nullptr);
        },
        timeout, absl::StrCat("kernel ", kernel_name_, ": dispatch"));
  }
  last_device_seconds_ = 0;
  if (status.ok() && timestamps_ != VK_NULL_HANDLE) {
    uint64_t ticks[2] = {0, 0};
    if (vk.vkGetQueryPoolResults(handle, timestamps_, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                                 VK_QUERY_RESULT_64_BIT) == VK_SUCCESS) {
      const uint32_t bits = device_->info().timestamp_valid_bits;
      const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      last_device_seconds_ = static_cast<double>((ticks[1] - ticks[0]) & mask) *
                             device_->info().timestamp_period_ns * 1e-9;
    }
  }
  return status;
}

}  // namespace tilert::vulkan
