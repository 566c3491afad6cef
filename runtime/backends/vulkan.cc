// The vulkan backend row: any Vulkan compute device, through libvulkan loaded at run time
// (backends/vulkan). A module is prepared by lowering each kernel to the SIMT IR for the
// device's target description, emitting SPIR-V and building one compute pipeline per kernel;
// launches bind tensors as storage buffers and scalars as push constants, dispatch with a time
// limit and turn the kernel's status record into the launch's error.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "backends/vulkan/device.h"
#include "backends/vulkan/driver.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipeline.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "backends/vulkan/spirv_emit/validate.h"
#include "backends/vulkan/target.h"
#include "lowering/lower_kernel.h"
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

// Why `auto` should not pick Vulkan devices: the shared lowering is probed with an empty kernel;
// while it is Unimplemented nothing can run.
std::string lowering_unavailable_reason(const lowering::TargetDescription& target) {
  Kernel probe;
  probe.name = "probe";
  probe.threads = 1;
  probe.grid = {Expr::int_const(1)};
  absl::StatusOr<simt::Function> lowered = lowering::lower_kernel(probe, target);
  if (absl::IsUnimplemented(lowered.status())) {
    return absl::StrCat("the SIMT lowering is not available (", lowered.status().message(), ")");
  }
  return "";
}

// What kernels may declare on a device: the lowering emulates mbarriers, roles, async copies and
// named barriers with workgroup barriers; bf16 is stored as 16-bit integers (or packed words)
// and so always works; clusters do not exist in Vulkan.
CapabilitySet vulkan_capabilities(const vulkan::PhysicalDeviceInfo& info,
                                  const vulkan::SpirvOptions& options) {
  CapabilitySet set = capability_bit(Capability::kBF16) | capability_bit(Capability::kAtomic) |
                      capability_bit(Capability::kMbarrier) | capability_bit(Capability::kRoles) |
                      capability_bit(Capability::kAsyncCopy) |
                      capability_bit(Capability::kNamedBarrier);
  if (info.storage_16bit) set |= capability_bit(Capability::kF16);
  if (info.storage_8bit) set |= capability_bit(Capability::kI8);
  if (options.subgroup_arithmetic) set |= capability_bit(Capability::kSubgroup);
  return set;
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
    record.mbarrier_bytes = 0;  // the lowering emulates mbarriers in registers on Vulkan
    record.software = info.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    record.cannot_run_kernels = lowering_unavailable_reason(vulkan::target_for_device(info));
    record.capabilities = vulkan_capabilities(info, vulkan::spirv_options_for_device(info));
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

// One kernel lowered, emitted and compiled into a pipeline; kept for the module's lifetime.
struct PreparedKernel {
  simt::Function function;
  vulkan::PushConstantLayout push_constants;
  std::unique_ptr<vulkan::ComputePipeline> pipeline;
  // Whether the pipeline has been dispatched: software drivers compile on first use.
  std::unique_ptr<std::atomic<bool>> dispatched = std::make_unique<std::atomic<bool>>(false);
  // Kernels emitted with specialize_scalars: no `pipeline`, but one per set of specialized
  // values, made by the first launch with them from the module and description kept here.
  bool specialized = false;
  std::vector<uint32_t> spirv;
  vulkan::PipelineDescription description;  // without its spirv span, set at each creation
  // Keyed by the launch's (SpecId, word) pairs, which are also what the pipeline is made with.
  mutable absl::flat_hash_map<std::vector<std::pair<uint32_t, uint32_t>>, std::unique_ptr<vulkan::ComputePipeline>>
      pipelines;
  std::unique_ptr<std::mutex> pipelines_mutex = std::make_unique<std::mutex>();
  // The status record (kernels with one): mapped memory made once, zeroed before and read after
  // each launch, which holds the mutex throughout. A record per launch cost two transfers and
  // three allocations, milliseconds on a discrete GPU.
  std::unique_ptr<vulkan::Buffer> status;
  std::unique_ptr<std::mutex> status_mutex = std::make_unique<std::mutex>();
};

struct PreparedModule {
  std::shared_ptr<vulkan::Device> device;
  std::vector<PreparedKernel> kernels;  // in the module's kernel order
};

// TILERT_VULKAN_PIPELINE_STATS=1: each pipeline is created to capture the driver's statistics
// (VK_KHR_pipeline_executable_properties), printed once when the kernel is prepared: registers,
// shared memory and the like, as far as the driver reports them, and the names and sizes of the
// internal representations it offers. TILERT_VULKAN_PIPELINE_DUMP=DIR also writes those
// representations to DIR/KERNEL.N.txt (or .bin).
const char* pipeline_dump_dir() {
  const char* dir = std::getenv("TILERT_VULKAN_PIPELINE_DUMP");
  return dir != nullptr && dir[0] != '\0' ? dir : nullptr;
}

bool pipeline_statistics_wanted() {
  static const bool wanted = [] {
    const char* text = std::getenv("TILERT_VULKAN_PIPELINE_STATS");
    return (text != nullptr && text[0] != '\0' && text[0] != '0') || pipeline_dump_dir() != nullptr;
  }();
  return wanted;
}

void print_pipeline_statistics(const vulkan::ComputePipeline& pipeline) {
  const char* kernel = pipeline.kernel_name().c_str();
  absl::StatusOr<std::vector<vulkan::PipelineStatistic>> stats = pipeline.statistics();
  if (!stats.ok()) {
    std::fprintf(stderr, "vulkan: %s\n", std::string(stats.status().message()).c_str());
    return;
  }
  for (const vulkan::PipelineStatistic& s : *stats) {
    std::fprintf(stderr, "vulkan: kernel %s: %s: %s = %s (%s)\n", kernel, s.executable.c_str(),
                 s.name.c_str(), s.value.c_str(), s.description.c_str());
  }
  absl::StatusOr<std::vector<vulkan::PipelineRepresentation>> reps =
      pipeline.internal_representations();
  if (!reps.ok()) {
    std::fprintf(stderr, "vulkan: %s\n", std::string(reps.status().message()).c_str());
    return;
  }
  const char* dir = pipeline_dump_dir();
  for (size_t i = 0; i < reps->size(); ++i) {
    const vulkan::PipelineRepresentation& r = (*reps)[i];
    std::string path;
    if (dir != nullptr) {
      path = absl::StrCat(dir, "/", kernel, ".", i, r.is_text ? ".txt" : ".bin");
      std::ofstream out(path, std::ios::binary);
      out.write(r.data.data(), static_cast<std::streamsize>(r.data.size()));
      if (!out) path = absl::StrCat("(could not write ", path, ")");
    }
    std::fprintf(stderr, "vulkan: kernel %s: %s: representation %zu \"%s\" (%s), %zu bytes%s%s\n",
                 kernel, r.executable.c_str(), i, r.name.c_str(), r.description.c_str(),
                 r.data.size(), path.empty() ? "" : " -> ", path.c_str());
  }
}

// Gemm loops go onto workgroup-scope matrices (VK_NV_cooperative_matrix2; lowering/
// lower_workgroup_gemm.cc) where the device has them, unless TILERT_VULKAN_WORKGROUP_MATRICES=0
// keeps them on the register pipeline.
bool workgroup_matrices_requested() {
  const char* value = std::getenv("TILERT_VULKAN_WORKGROUP_MATRICES");
  return value == nullptr || std::string_view(value) != "0";
}

// Whether a kernel's integer scalars become specialization constants, one pipeline per set of
// values (SpirvOptions::specialize_scalars): by default for kernels on workgroup-scope matrices,
// which NVIDIA's driver runs 5x slower with sizes and strides only known at run time
// (tests/bench/RESULTS.md, 2026-12-07 (afternoon)). TILERT_VULKAN_SPECIALIZE=1 specializes every
// kernel, =0 none.
bool specialize_scalars(const simt::Function& f) {
  if (const char* value = std::getenv("TILERT_VULKAN_SPECIALIZE"); value != nullptr && value[0] != '\0')
    return std::string_view(value) == "1";
  for (const simt::MatrixVariable& m : f.matrices)
    if (m.scope == simt::MatrixScope::kWorkgroup) return true;
  return false;
}

absl::StatusOr<PreparedKernel> prepare_kernel(const std::shared_ptr<vulkan::Device>& device,
                                              const Kernel& kernel) {
  const vulkan::PhysicalDeviceInfo& info = device->info();
  PreparedKernel prepared;
  lowering::TargetDescription target = vulkan::target_for_device(info);
  if (!workgroup_matrices_requested()) target.workgroup_matrices = {};
  ASSIGN_OR_RETURN(prepared.function, lowering::lower_kernel(kernel, target));
  vulkan::SpirvOptions options = vulkan::spirv_options_for_device(info);
  options.specialize_scalars = specialize_scalars(prepared.function);
  ASSIGN_OR_RETURN(std::vector<uint32_t> words, vulkan::emit_spirv(prepared.function, options));
  RETURN_IF_ERROR(vulkan::validate_emitted_spirv(kernel.name, words, options.spirv_version));
  prepared.push_constants = vulkan::push_constant_layout(prepared.function, options.specialize_scalars);
  for (bool s : prepared.push_constants.specialized) prepared.specialized |= s;
  if (prepared.push_constants.total_bytes > info.max_push_constant_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "kernel ", kernel.name, ": its scalar parameters take ", prepared.push_constants.total_bytes,
        " bytes of push constants, the device allows ", info.max_push_constant_bytes));
  }
  uint32_t storage_buffers = 0;
  for (const simt::Param& p : prepared.function.params) storage_buffers += p.is_array ? 1 : 0;
  vulkan::PipelineDescription description;
  description.kernel_name = kernel.name;
  description.spirv = words;
  description.storage_buffers = storage_buffers;
  description.push_constant_bytes = prepared.push_constants.total_bytes;
  description.capture_statistics = pipeline_statistics_wanted();
  if (prepared.specialized) {
    prepared.spirv = std::move(words);
    description.spirv = {};
    prepared.description = std::move(description);
  } else {
    ASSIGN_OR_RETURN(prepared.pipeline, vulkan::ComputePipeline::create(device, description));
    if (description.capture_statistics) print_pipeline_statistics(*prepared.pipeline);
  }
  if (prepared.function.status_param >= 0) {
    ASSIGN_OR_RETURN(prepared.status, vulkan::Buffer::create_host_visible(device, simt::kStatusWords * 4));
  }
  return prepared;
}

absl::StatusOr<std::shared_ptr<void>> vulkan_module_prepare(const DeviceRecord& record,
                                                            const Module& module) {
  auto prepared = std::make_shared<PreparedModule>();
  ASSIGN_OR_RETURN(prepared->device, state_of(record).logical_device());
  for (const Kernel& kernel : module.kernels) {
    ASSIGN_OR_RETURN(PreparedKernel k, prepare_kernel(prepared->device, kernel));
    prepared->kernels.push_back(std::move(k));
  }
  return std::shared_ptr<void>(prepared);
}

absl::StatusOr<std::shared_ptr<void>> vulkan_stream_create(const DeviceRecord&) {
  return std::shared_ptr<void>();
}

constexpr std::chrono::milliseconds kSoftwareCompileAllowance{300000};

// TILERT_SYNC_TIMEOUT_MS, or 10 s: how long one dispatch may run before the device is lost.
std::chrono::milliseconds dispatch_timeout() {
  const char* text = std::getenv("TILERT_SYNC_TIMEOUT_MS");
  int64_t ms = 0;
  if (text != nullptr && absl::SimpleAtoi(text, &ms) && ms > 0) return std::chrono::milliseconds(ms);
  return std::chrono::milliseconds(10000);
}

// TILERT_VULKAN_DEVICE_TIME=1: each launch prints how long its dispatch ran on the device
// (timestamps around it) and how long the backend's launch took on the host, dispatch included.
bool device_time_wanted() {
  static const bool wanted = [] {
    const char* text = std::getenv("TILERT_VULKAN_DEVICE_TIME");
    return text != nullptr && text[0] != '\0' && text[0] != '0';
  }();
  return wanted;
}

// The pipeline of a specialized kernel for these values, made on first use; true with it when
// it was made now (a software driver compiles it in its first dispatch).
absl::StatusOr<std::pair<vulkan::ComputePipeline*, bool>> specialized_pipeline(
    const std::shared_ptr<vulkan::Device>& device, const PreparedKernel& kernel,
    const std::vector<std::pair<uint32_t, uint32_t>>& values) {
  std::lock_guard<std::mutex> lock(*kernel.pipelines_mutex);
  auto& pipelines = kernel.pipelines;
  if (auto it = pipelines.find(values); it != pipelines.end()) return std::make_pair(it->second.get(), false);
  vulkan::PipelineDescription description = kernel.description;
  description.spirv = kernel.spirv;
  description.specialization = values;
  ASSIGN_OR_RETURN(std::unique_ptr<vulkan::ComputePipeline> pipeline, vulkan::ComputePipeline::create(device, description));
  if (description.capture_statistics) print_pipeline_statistics(*pipeline);
  vulkan::ComputePipeline* made = pipeline.get();
  pipelines.emplace(values, std::move(pipeline));
  return std::make_pair(made, true);
}

// Launches are synchronous: the dispatch is waited for, and its status record read back.
absl::Status vulkan_launch(const DeviceRecord&, void*, const LaunchRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  const auto& prepared = *static_cast<const PreparedModule*>(request.prepared_module);
  const PreparedKernel& kernel = prepared.kernels.at(request.kernel_index);
  const simt::Function& function = kernel.function;
  std::vector<vulkan::Buffer*> buffers;
  std::vector<std::byte> push_constants(kernel.push_constants.total_bytes);
  // The specialized parameters' (SpecId = parameter index, word), in parameter order.
  std::vector<std::pair<uint32_t, uint32_t>> specialization;
  for (size_t i = 0; i < request.args.size() && i < function.params.size(); ++i) {
    const simt::Param& param = function.params[i];
    const LaunchValue& value = request.args[i];
    if (const auto* tensor = std::get_if<DeviceTensor>(&value)) {
      size_t elements = tensor->bytes / static_cast<size_t>(dtype_size(tensor->dtype));
      if (elements >= (size_t{1} << 31)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "kernel ", function.name, ": tensor parameter ", param.name, " has ", elements,
            " elements; Vulkan kernels index tensors with 32-bit integers (at most 2^31 - 1)"));
      }
      buffers.push_back(static_cast<vulkan::Buffer*>(tensor->memory));
      continue;
    }
    const auto* as_int = std::get_if<int64_t>(&value);
    const auto* as_float = std::get_if<double>(&value);
    if (kernel.push_constants.specialized[i]) {
      specialization.emplace_back(static_cast<uint32_t>(i), vulkan::specialization_word(
                                      param.type, as_int ? *as_int : static_cast<int64_t>(*as_float)));
      continue;
    }
    int32_t offset = kernel.push_constants.offsets[i];
    if (offset < 0) {
      return absl::InternalError(absl::StrCat("kernel ", function.name, ": parameter ",
                                              param.name, " is a scalar in the lowered kernel"));
    }
    vulkan::store_push_constant(param.type, as_int ? *as_int : static_cast<int64_t>(*as_float),
                                as_float ? *as_float : static_cast<double>(*as_int),
                                push_constants.data() + offset);
  }
  vulkan::Buffer* status = kernel.status.get();
  std::unique_lock<std::mutex> status_lock(*kernel.status_mutex, std::defer_lock);
  if (status != nullptr) {
    status_lock.lock();
    std::vector<uint32_t> zeros(simt::kStatusWords, 0);
    RETURN_IF_ERROR(status->upload(0, zeros.data(), zeros.size() * 4));
    buffers.push_back(status);
  }
  const LaunchShape& shape = *request.shape;
  vulkan::GridSize grid{static_cast<uint32_t>(shape.grid[0]), static_cast<uint32_t>(shape.grid[1]),
                        static_cast<uint32_t>(shape.grid[2])};
  // A CPU implementation (lavapipe) compiles the shader inside its first dispatch, which can take
  // far longer than the kernel itself; that dispatch gets a compile allowance on top.
  bool first_dispatch = !kernel.dispatched->exchange(true);
  vulkan::ComputePipeline* pipeline = kernel.pipeline.get();
  if (kernel.specialized) {
    ASSIGN_OR_RETURN(auto found, specialized_pipeline(prepared.device, kernel, specialization));
    pipeline = found.first;
    first_dispatch = found.second;
  }
  std::chrono::milliseconds timeout = dispatch_timeout();
  if (prepared.device->info().type == VK_PHYSICAL_DEVICE_TYPE_CPU && first_dispatch)
    timeout += kSoftwareCompileAllowance;
  RETURN_IF_ERROR(pipeline->dispatch(buffers, push_constants, grid, timeout));
  if (device_time_wanted()) {
    const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "vulkan: kernel %s: %.3f ms on the device, %.3f ms in the launch\n",
                 function.name.c_str(), pipeline->last_device_seconds() * 1e3, host * 1e3);
  }
  if (status == nullptr) return absl::OkStatus();
  std::vector<uint32_t> words(simt::kStatusWords, 0);
  RETURN_IF_ERROR(status->download(0, words.data(), words.size() * 4));
  return lowering::status_record_error(function, words);
}

// Launches finish before they return, so there is nothing to wait for.
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
