#include "backends/vulkan/device.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"

namespace tilert::vulkan {

namespace {

absl::StatusOr<std::vector<std::string>> device_extensions(const Dispatch& vk,
                                                           VkPhysicalDevice device) {
  uint32_t count = 0;
  VK_RETURN_IF_ERROR(vk.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr),
                     "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> properties(count);
  VK_RETURN_IF_ERROR(
      vk.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, properties.data()),
      "vkEnumerateDeviceExtensionProperties");
  std::vector<std::string> names;
  for (uint32_t i = 0; i < count; ++i) names.emplace_back(properties[i].extensionName);
  return names;
}

bool has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The first queue family that can run compute work, or nothing.
std::optional<uint32_t> compute_queue_family(const Dispatch& vk, VkPhysicalDevice device) {
  uint32_t count = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && families[i].queueCount > 0) {
      return i;
    }
  }
  return std::nullopt;
}

// The 16x16x16 shapes tilert's emitter can use: A and B of one 16-bit float type, C and the
// result f32, subgroup scope, and no saturating accumulation (which would oblige the shader to
// ask for it). A failing query leaves them unrecorded: the device still runs plain kernels.
void find_matrix_shapes(const Dispatch& vk, bool bfloat16_features, PhysicalDeviceInfo& info) {
  if (vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR == nullptr) return;
  uint32_t count = 0;
  if (vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(info.handle, &count, nullptr) != VK_SUCCESS) return;
  std::vector<VkCooperativeMatrixPropertiesKHR> shapes(
      count, VkCooperativeMatrixPropertiesKHR{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
  VkResult listed = vk.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(info.handle, &count, shapes.data());
  if (listed != VK_SUCCESS && listed != VK_INCOMPLETE) return;
  shapes.resize(std::min<size_t>(count, shapes.size()));
  for (const VkCooperativeMatrixPropertiesKHR& s : shapes) {
    if (s.MSize != 16 || s.NSize != 16 || s.KSize != 16 || s.scope != VK_SCOPE_SUBGROUP_KHR ||
        s.CType != VK_COMPONENT_TYPE_FLOAT32_KHR || s.ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
        s.saturatingAccumulation || s.AType != s.BType) {
      continue;
    }
    if (s.AType == VK_COMPONENT_TYPE_FLOAT16_KHR) info.cooperative_matrix_16x16x16_f16 = true;
    if (s.AType == VK_COMPONENT_TYPE_BFLOAT16_KHR && bfloat16_features) {
      info.cooperative_matrix_16x16x16_bf16 = true;
    }
  }
}

// The workgroup-scope shapes with flexible dimensions of VK_NV_cooperative_matrix2 whose A and B
// are f16 or bf16 and whose C and result are f32, without saturating accumulation.
void find_workgroup_matrix_shapes(const Dispatch& vk, PhysicalDeviceInfo& info) {
  if (vk.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV == nullptr) return;
  uint32_t count = 0;
  if (vk.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(info.handle, &count, nullptr) != VK_SUCCESS)
    return;
  std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> shapes(
      count, VkCooperativeMatrixFlexibleDimensionsPropertiesNV{
                 VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV});
  VkResult listed = vk.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(info.handle, &count,
                                                                                          shapes.data());
  if (listed != VK_SUCCESS && listed != VK_INCOMPLETE) return;
  shapes.resize(std::min<size_t>(count, shapes.size()));
  for (const VkCooperativeMatrixFlexibleDimensionsPropertiesNV& s : shapes) {
    const bool f16 = s.AType == VK_COMPONENT_TYPE_FLOAT16_KHR;
    const bool bf16 = s.AType == VK_COMPONENT_TYPE_BFLOAT16_KHR && info.bfloat16_cooperative_matrix;
    if (s.scope != VK_SCOPE_WORKGROUP_KHR || s.AType != s.BType || (!f16 && !bf16) ||
        s.CType != VK_COMPONENT_TYPE_FLOAT32_KHR || s.ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
        s.saturatingAccumulation) {
      continue;
    }
    info.workgroup_matrix_shapes.push_back(
        {s.MGranularity, s.NGranularity, s.KGranularity, bf16, s.workgroupInvocations});
  }
}

absl::StatusOr<PhysicalDeviceInfo> describe(const Dispatch& vk, VkPhysicalDevice handle,
                                            uint32_t index) {
  PhysicalDeviceInfo info;
  info.handle = handle;
  info.index = index;

  VkPhysicalDeviceProperties basic{};
  vk.vkGetPhysicalDeviceProperties(handle, &basic);
  info.api_version = basic.apiVersion;
  info.type = basic.deviceType;
  info.name = basic.deviceName;
  info.max_shared_memory_bytes = basic.limits.maxComputeSharedMemorySize;
  info.max_invocations = basic.limits.maxComputeWorkGroupInvocations;
  info.max_push_constant_bytes = basic.limits.maxPushConstantsSize;
  info.timestamp_period_ns = basic.limits.timestampPeriod;

  ASSIGN_OR_RETURN(std::vector<std::string> extensions, device_extensions(vk, handle));
  // Vulkan 1.2 devices report driver properties and the 1.1/1.2 feature blocks; older ones only
  // subgroup properties (1.1), and their optional features stay off. Cooperative matrices are
  // used on 1.2 devices only (they need vulkanMemoryModel, a 1.2 feature).
  const bool vulkan12 = basic.apiVersion >= VK_API_VERSION_1_2;
  const bool coopmat = vulkan12 && has(extensions, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  VkPhysicalDeviceCooperativeMatrixPropertiesKHR coopmat_properties{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
  const bool coopmat2 = coopmat && has(extensions, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV coopmat2_properties{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
  if (coopmat2) coopmat_properties.pNext = &coopmat2_properties;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  driver.pNext = coopmat ? &coopmat_properties : nullptr;
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = vulkan12 ? &driver : nullptr;
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties.pNext = &subgroup;
  vk.vkGetPhysicalDeviceProperties2(handle, &properties);
  info.subgroup_size = subgroup.subgroupSize;
  info.subgroup_stages = subgroup.supportedStages;
  info.subgroup_operations = subgroup.supportedOperations;
  if (vulkan12) {
    info.driver_name = driver.driverName;
    info.driver_info = driver.driverInfo;
  }

  if (vulkan12) {
    const bool executable_properties =
        has(extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_features{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat_features{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    const bool bfloat16 = coopmat && has(extensions, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
    VkPhysicalDeviceShaderBfloat16FeaturesKHR bfloat16_features{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
    // Only structures of extensions the device has go into the chain.
    void* extension_features = nullptr;
    if (executable_properties) extension_features = &executable_features;
    if (coopmat) {
      coopmat_features.pNext = extension_features;
      extension_features = &coopmat_features;
    }
    if (bfloat16) {
      bfloat16_features.pNext = extension_features;
      extension_features = &bfloat16_features;
    }
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV coopmat2_features{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    if (coopmat2) {
      coopmat2_features.pNext = extension_features;
      extension_features = &coopmat2_features;
    }
    VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    features12.pNext = extension_features;
    VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    features11.pNext = &features12;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.pNext = &features11;
    vk.vkGetPhysicalDeviceFeatures2(handle, &features);
    info.shader_float16 = features12.shaderFloat16;
    info.shader_int8 = features12.shaderInt8;
    info.storage_8bit = features12.storageBuffer8BitAccess;
    info.vulkan_memory_model = features12.vulkanMemoryModel;
    info.storage_16bit = features11.storageBuffer16BitAccess;
    info.pipeline_statistics = executable_properties && executable_features.pipelineExecutableInfo;
    info.cooperative_matrix =
        coopmat && coopmat_features.cooperativeMatrix &&
        (coopmat_properties.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    info.bfloat16_cooperative_matrix = info.cooperative_matrix && bfloat16 &&
                                       bfloat16_features.shaderBFloat16Type &&
                                       bfloat16_features.shaderBFloat16CooperativeMatrix;
    info.workgroup_matrices = info.cooperative_matrix && coopmat2 && features12.vulkanMemoryModel &&
                              coopmat2_features.cooperativeMatrixWorkgroupScope &&
                              coopmat2_features.cooperativeMatrixFlexibleDimensions;
    info.workgroup_matrix_tensor_addressing =
        info.workgroup_matrices && coopmat2_features.cooperativeMatrixTensorAddressing;
    if (info.workgroup_matrices) {
      info.workgroup_matrix_max_invocations = coopmat2_properties.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
      info.workgroup_matrix_reserved_shared_bytes =
          coopmat2_properties.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
      info.flexible_matrix_max_dimension = coopmat2_properties.cooperativeMatrixFlexibleDimensionsMaxDimension;
    }
  }
  if (info.cooperative_matrix) find_matrix_shapes(vk, info.bfloat16_cooperative_matrix, info);
  if (info.workgroup_matrices) find_workgroup_matrix_shapes(vk, info);

  info.shader_clock = has(extensions, VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
  info.subgroup_size_control = has(extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  std::optional<uint32_t> family = compute_queue_family(vk, handle);
  if (!family) {
    return absl::NotFoundError(absl::StrCat("Vulkan device ", info.name, " has no compute queue"));
  }
  info.compute_queue_family = *family;
  {
    uint32_t count = 0;
    vk.vkGetPhysicalDeviceQueueFamilyProperties(handle, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vk.vkGetPhysicalDeviceQueueFamilyProperties(handle, &count, families.data());
    if (*family < count) info.timestamp_valid_bits = families[*family].timestampValidBits;
  }
  return info;
}

}  // namespace

std::string PhysicalDeviceInfo::api_version_string() const {
  return absl::StrCat(VK_API_VERSION_MAJOR(api_version), ".", VK_API_VERSION_MINOR(api_version),
                      ".", VK_API_VERSION_PATCH(api_version));
}

std::string PhysicalDeviceInfo::features_string() const {
  std::vector<std::string> parts;
  parts.push_back(absl::StrCat("subgroup ", subgroup_size));
  parts.push_back(absl::StrCat("shared ", max_shared_memory_bytes / 1024, " KB"));
  if (shader_float16) parts.push_back("fp16");
  if (shader_int8) parts.push_back("int8");
  if (storage_16bit) parts.push_back("storage16");
  if (storage_8bit) parts.push_back("storage8");
  if (cooperative_matrix_16x16x16_f16 || cooperative_matrix_16x16x16_bf16) {
    parts.push_back(absl::StrCat("cooperative-matrix 16x16x16",
                                 cooperative_matrix_16x16x16_f16 ? " f16" : "",
                                 cooperative_matrix_16x16x16_bf16 ? " bf16" : ""));
  } else if (cooperative_matrix) {
    parts.push_back("cooperative-matrix (no 16x16x16 f16 shape)");
  }
  if (workgroup_matrices) {
    std::string shapes;
    for (const WorkgroupMatrixShape& w : workgroup_matrix_shapes) {
      absl::StrAppend(&shapes, " ", w.m, "x", w.n, "x", w.k, w.bfloat16 ? " bf16" : " f16", "/", w.invocations);
    }
    parts.push_back(absl::StrCat("workgroup-matrices", workgroup_matrix_tensor_addressing ? " tensor-addressing" : "",
                                 " (up to ", workgroup_matrix_max_invocations,
                                 " invocations, dimensions up to ", flexible_matrix_max_dimension, ", ",
                                 workgroup_matrix_reserved_shared_bytes, " shared bytes reserved;", shapes, ")"));
  }
  if (shader_clock) parts.push_back("clock");
  if (subgroup_size_control) parts.push_back("subgroup-size-control");
  if (pipeline_statistics) parts.push_back("pipeline-statistics");
  return absl::StrJoin(parts, ", ");
}

// ---- Instance ----

absl::StatusOr<std::shared_ptr<Instance>> Instance::create(std::shared_ptr<Driver> driver) {
  const Dispatch& global = driver->global();
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (global.vkEnumerateInstanceVersion != nullptr) {
    VK_RETURN_IF_ERROR(global.vkEnumerateInstanceVersion(&loader_version),
                       "vkEnumerateInstanceVersion");
  }
  if (loader_version < VK_API_VERSION_1_1) {
    return absl::UnavailableError(absl::StrCat("unavailable: ", driver->library_name(),
                                               " is a Vulkan 1.0 loader; tilert needs 1.1"));
  }
  VkApplicationInfo application{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  application.pApplicationName = "tilert";
  application.pEngineName = "tilert";
  application.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);
  VkInstanceCreateInfo create_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  create_info.pApplicationInfo = &application;

  std::shared_ptr<Instance> instance(new Instance());
  instance->driver_ = std::move(driver);
  VK_RETURN_IF_ERROR(global.vkCreateInstance(&create_info, nullptr, &instance->instance_),
                     "vkCreateInstance");
  absl::StatusOr<Dispatch> table = instance->driver_->resolve_instance(instance->instance_);
  if (!table.ok()) {
    // The destructor cannot destroy an instance without its entry points: find just that one.
    auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(
        global.vkGetInstanceProcAddr(instance->instance_, "vkDestroyInstance"));
    if (destroy != nullptr) destroy(instance->instance_, nullptr);
    instance->instance_ = VK_NULL_HANDLE;
    return table.status();
  }
  instance->vk_ = *table;
  return instance;
}

Instance::~Instance() {
  if (instance_ != VK_NULL_HANDLE) vk_.vkDestroyInstance(instance_, nullptr);
}

absl::StatusOr<std::vector<PhysicalDeviceInfo>> Instance::physical_devices() const {
  uint32_t count = 0;
  VK_RETURN_IF_ERROR(vk_.vkEnumeratePhysicalDevices(instance_, &count, nullptr),
                     "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  VkResult listed = vk_.vkEnumeratePhysicalDevices(instance_, &count, handles.data());
  if (listed != VK_INCOMPLETE) VK_RETURN_IF_ERROR(listed, "vkEnumeratePhysicalDevices");
  handles.resize(count);
  std::vector<PhysicalDeviceInfo> devices;
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties basic{};
    vk_.vkGetPhysicalDeviceProperties(handles[i], &basic);
    if (basic.apiVersion < VK_API_VERSION_1_1) continue;  // no subgroup or feature queries
    absl::StatusOr<PhysicalDeviceInfo> info = describe(vk_, handles[i], i);
    if (absl::IsNotFound(info.status())) continue;  // no compute queue: nothing to run on
    RETURN_IF_ERROR(info.status());
    devices.push_back(std::move(*info));
  }
  return devices;
}

// ---- Device ----

absl::StatusOr<std::shared_ptr<Device>> Device::create(std::shared_ptr<Instance> instance,
                                                       const PhysicalDeviceInfo& info) {
  const Dispatch& vk = instance->vk();
  std::shared_ptr<Device> device(new Device());
  device->instance_ = std::move(instance);
  device->info_ = info;
  vk.vkGetPhysicalDeviceMemoryProperties(info.handle, &device->memory_);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = info.compute_queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  // Enable exactly what describe() found, so kernels may use every feature the device reports.
  // Extension feature structs are chained only for extensions that are enabled.
  void* extension_features = nullptr;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  coopmat.cooperativeMatrix = VK_TRUE;
  if (info.cooperative_matrix) extension_features = &coopmat;
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bfloat16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  bfloat16.shaderBFloat16Type = VK_TRUE;
  bfloat16.shaderBFloat16CooperativeMatrix = VK_TRUE;
  if (info.bfloat16_cooperative_matrix) {
    bfloat16.pNext = extension_features;
    extension_features = &bfloat16;
  }
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coopmat2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  coopmat2.cooperativeMatrixWorkgroupScope = VK_TRUE;
  coopmat2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
  coopmat2.cooperativeMatrixTensorAddressing = info.workgroup_matrix_tensor_addressing;
  if (info.workgroup_matrices) {
    coopmat2.pNext = extension_features;
    extension_features = &coopmat2;
  }
  VkPhysicalDeviceShaderClockFeaturesKHR clock{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  clock.shaderSubgroupClock = VK_TRUE;
  if (info.shader_clock) {
    clock.pNext = extension_features;
    extension_features = &clock;
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  executable.pipelineExecutableInfo = VK_TRUE;
  if (info.pipeline_statistics) {
    executable.pNext = extension_features;
    extension_features = &executable;
  }
  VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features12.shaderFloat16 = info.shader_float16;
  features12.shaderInt8 = info.shader_int8;
  features12.storageBuffer8BitAccess = info.storage_8bit;
  features12.vulkanMemoryModel = info.vulkan_memory_model;
  features12.pNext = extension_features;
  VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  features11.storageBuffer16BitAccess = info.storage_16bit;
  features11.pNext = &features12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = info.api_version >= VK_API_VERSION_1_2 ? &features11 : nullptr;

  std::vector<const char*> extensions;
  if (info.cooperative_matrix) extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (info.bfloat16_cooperative_matrix) extensions.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  if (info.workgroup_matrices) extensions.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  if (info.shader_clock) extensions.push_back(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
  if (info.subgroup_size_control) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (info.pipeline_statistics)
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);

  VkDeviceCreateInfo create_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  create_info.pNext = &features;
  create_info.queueCreateInfoCount = 1;
  create_info.pQueueCreateInfos = &queue;
  create_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create_info.ppEnabledExtensionNames = extensions.data();
  VK_RETURN_IF_ERROR(vk.vkCreateDevice(info.handle, &create_info, nullptr, &device->device_),
                     absl::StrCat("vkCreateDevice(", info.name, ")"));
  absl::StatusOr<Dispatch> table = resolve_device(vk, device->device_);
  if (!table.ok()) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(
        vk.vkGetDeviceProcAddr(device->device_, "vkDestroyDevice"));
    if (destroy != nullptr) destroy(device->device_, nullptr);
    device->device_ = VK_NULL_HANDLE;
    return table.status();
  }
  device->vk_ = *table;
  const Dispatch& dvk = device->vk_;
  dvk.vkGetDeviceQueue(device->device_, info.compute_queue_family, 0, &device->queue_);

  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = info.compute_queue_family;
  VK_RETURN_IF_ERROR(dvk.vkCreateCommandPool(device->device_, &pool, nullptr, &device->command_pool_),
                     "vkCreateCommandPool");
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VK_RETURN_IF_ERROR(dvk.vkCreateFence(device->device_, &fence_info, nullptr, &device->fence_), "vkCreateFence");
  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VK_RETURN_IF_ERROR(
      dvk.vkCreatePipelineCache(device->device_, &cache, nullptr, &device->pipeline_cache_),
      "vkCreatePipelineCache");
  return device;
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  // A timed-out dispatch may still be running: its kernel ends eventually (kernels are finite),
  // and nothing it uses may be destroyed before then.
  vk_.vkDeviceWaitIdle(device_);
  if (pipeline_cache_ != VK_NULL_HANDLE) vk_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (command_pool_ != VK_NULL_HANDLE) vk_.vkDestroyCommandPool(device_, command_pool_, nullptr);
  if (fence_ != VK_NULL_HANDLE) vk_.vkDestroyFence(device_, fence_, nullptr);
  vk_.vkDestroyDevice(device_, nullptr);
}

absl::Status Device::check_usable() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

void Device::wait_idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  vk_.vkDeviceWaitIdle(device_);
}

absl::Status Device::mark_lost(absl::Status why) {
  lost_ = absl::FailedPreconditionError(
      absl::StrCat("Vulkan device ", info_.name, " is lost: ", why.message()));
  return why;
}

absl::Status Device::submit_and_wait(const std::function<void(VkCommandBuffer)>& record,
                                     std::chrono::milliseconds timeout, std::string_view what) {
  std::lock_guard<std::mutex> lock(mutex_);
  RETURN_IF_ERROR(lost_);
  VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocate.commandPool = command_pool_;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VK_RETURN_IF_ERROR(vk_.vkAllocateCommandBuffers(device_, &allocate, &commands),
                     "vkAllocateCommandBuffers");
  // The device's one fence: submissions are serialized by mutex_ and each is waited for.
  VkFence fence = fence_;
  auto release = [&] { vk_.vkFreeCommandBuffers(device_, command_pool_, 1, &commands); };

  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  absl::Status status = check(vk_.vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
  if (status.ok()) {
    record(commands);
    status = check(vk_.vkEndCommandBuffer(commands), "vkEndCommandBuffer");
  }
  if (status.ok()) status = check(vk_.vkResetFences(device_, 1, &fence), "vkResetFences");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  if (status.ok()) status = check(vk_.vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
  if (!status.ok()) {
    release();
    if (absl::IsUnavailable(status)) return mark_lost(status);  // VK_ERROR_DEVICE_LOST
    return status;
  }

  // Most dispatches finish within a few milliseconds; polling the fence that long first keeps a
  // blocking wait's wake-up latency out of every short launch. Then the wait blocks. Not on a
  // CPU implementation (lavapipe): the polling thread would take a core from the kernel itself.
  const auto submitted = std::chrono::steady_clock::now();
  const auto poll_until =
      submitted + (info_.type == VK_PHYSICAL_DEVICE_TYPE_CPU
                       ? std::chrono::milliseconds(0)
                       : std::min<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(2)));
  VkResult waited = VK_NOT_READY;
  while (waited == VK_NOT_READY && std::chrono::steady_clock::now() < poll_until)
    waited = vk_.vkGetFenceStatus(device_, fence);
  if (waited == VK_NOT_READY) {
    const auto left = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - submitted);
    uint64_t nanoseconds = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(left, std::chrono::milliseconds(0))).count());
    waited = vk_.vkWaitForFences(device_, 1, &fence, VK_TRUE, nanoseconds);
  }
  if (waited == VK_TIMEOUT) {
    // The work is still queued: its command buffer and fence must outlive it, so they are left
    // to the destructor's wait (the pool frees the buffer, the device destroys the fence).
    return mark_lost(absl::DeadlineExceededError(absl::StrCat(
        av(what), " did not finish within ", timeout.count(), " ms")));
  }
  release();
  status = check(waited, absl::StrCat("vkWaitForFences(", av(what), ")"));
  if (!status.ok()) return mark_lost(status);
  return absl::OkStatus();
}

}  // namespace tilert::vulkan
