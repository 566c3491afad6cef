#include "frontends/cli/profile_gpu.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/kernel_params.h"
#include "backends/cuda/ptx_emit.h"
#include "ir/param_eval.h"
#include "ir/status.h"
#include "lowering/lower_kernel.h"

namespace tilert::profile {

void add_device_lanes(const simt::Function& f, const std::vector<lowering::ProfiledLane>& lanes,
                      const int64_t grid[3], ProfileResult* result) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const lowering::ProfiledLane& l : lanes) origin = std::min(origin, l.start_ns);
  for (const lowering::ProfiledLane& l : lanes) {
    const simt::ProfileLane& info = f.profile_lanes.at(l.lane);
    cpu::SyncLane& lane = result->device_lanes.emplace_back();
    lane.block[0] = l.block_linear % grid[0];
    lane.block[1] = l.block_linear / grid[0] % grid[1];
    lane.block[2] = l.block_linear / (grid[0] * grid[1]);
    lane.role = info.name;
    lane.task = info.is_role ? absl::StrCat("role ", info.name) : info.name;
    lane.first_thread = info.first_thread;
    lane.thread_count = info.threads;
    lane.start_ns = l.start_ns - origin;
    lane.end_ns = l.end_ns - origin;
    for (const lowering::ProfiledWait& w : l.waits) {
      const simt::SyncSite& site = f.sync_sites.at(w.site);
      std::string name = site.barrier;
      if (site.line != 0) absl::StrAppend(&name, " at line ", site.line);
      lane.events.push_back(cpu::SyncEvent{.kind = cpu::SyncEventKind::kWait, .name = std::move(name),
                                           .start_ns = w.start_ns - origin, .end_ns = w.end_ns - origin,
                                           .threads = info.threads});
    }
    result->dropped_waits += l.dropped;
  }
}

namespace {

// Device memory freed with its owner.
class DeviceMemory {
 public:
  DeviceMemory(std::shared_ptr<cuda::Device> device, uint64_t address) : device_(std::move(device)), address_(address) {}
  ~DeviceMemory() { device_->free(address_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  uint64_t address() const { return address_; }

 private:
  std::shared_ptr<cuda::Device> device_;
  uint64_t address_;
};

absl::StatusOr<std::unique_ptr<DeviceMemory>> allocate(const std::shared_ptr<cuda::Device>& device, size_t bytes) {
  ASSIGN_OR_RETURN(uint64_t address, device->alloc(bytes));
  return std::make_unique<DeviceMemory>(device, address);
}

// One lowered variant of the kernel, loaded and with its parameter values in place.
struct LoadedKernel {
  simt::Function function;
  std::shared_ptr<cuda::Module> module;
  void* entry = nullptr;
  std::vector<cuda::ParamSlot> slots;
  std::vector<void*> pointers;
};

}  // namespace

absl::StatusOr<ProfileResult> profile_cuda_launch(const Kernel& kernel, std::span<const check::ScalarValue> scalars,
                                                  const ProfileOptions& options, int ordinal) {
  if (scalars.size() != kernel.num_params)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", kernel.name, ": expects ", kernel.num_params,
                                                   " parameter values, got ", scalars.size()));
  ASSIGN_OR_RETURN(LaunchShape shape, eval_launch_shape(kernel, check::integer_param_values(scalars)));
  ASSIGN_OR_RETURN(HostTensors host, make_profile_inputs(kernel, scalars, options.seed));

  ASSIGN_OR_RETURN(std::shared_ptr<cuda::Driver> driver, cuda::Driver::load());
  ASSIGN_OR_RETURN(std::vector<cuda::DeviceInfo> infos, driver->devices());
  if (ordinal < 0 || ordinal >= static_cast<int>(infos.size()))
    return absl::NotFoundError(absl::StrCat("no device cuda:", ordinal, " (the driver reports ", infos.size(), ")"));
  ASSIGN_OR_RETURN(std::string target_name, cuda::ptx_target_name(infos[ordinal]));
  ASSIGN_OR_RETURN(lowering::TargetDescription target, lowering::parse_target(target_name));
  ASSIGN_OR_RETURN(std::shared_ptr<cuda::Device> device, cuda::Device::open(driver, ordinal));

  // Tensors, each kernel's status record and the profile record.
  std::vector<std::unique_ptr<DeviceMemory>> memory;
  std::vector<uint64_t> tensor_address(kernel.num_params, 0);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    if (kernel.symbols[p].kind != SymbolKind::kTensorParam) continue;
    ASSIGN_OR_RETURN(memory.emplace_back(), allocate(device, host.bytes[p].size()));
    tensor_address[p] = memory.back()->address();
    RETURN_IF_ERROR(device->upload(tensor_address[p], host.bytes[p].data(), host.bytes[p].size()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> status, allocate(device, simt::kStatusWords * 4));

  LoadedKernel variants[2];  // plain, instrumented
  for (int v = 0; v < 2; ++v) {
    LoadedKernel& k = variants[v];
    ASSIGN_OR_RETURN(k.function, lowering::lower_kernel(kernel, target, {.sync_profile = v == 1}));
    ASSIGN_OR_RETURN(std::string ptx, cuda::emit_ptx_module(std::span(&k.function, 1), target));
    ASSIGN_OR_RETURN(k.module, device->load_module(ptx));
    ASSIGN_OR_RETURN(k.entry, k.module->function(k.function.name));
  }
  const simt::Function& profiled = variants[1].function;
  const size_t profile_words = static_cast<size_t>(lowering::profile_words(profiled));
  ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> record, allocate(device, profile_words * 4));
  for (LoadedKernel& k : variants) {
    const simt::Function& f = k.function;
    k.slots.resize(f.params.size());
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (static_cast<int32_t>(i) == f.status_param) {
        k.slots[i] = cuda::address_param(status->address());
      } else if (static_cast<int32_t>(i) == f.profile_param) {
        k.slots[i] = cuda::address_param(record->address());
      } else if (f.params[i].is_array) {
        k.slots[i] = cuda::address_param(tensor_address.at(i));
      } else {
        const check::ScalarValue& s = scalars[i];
        k.slots[i] = cuda::scalar_param(f.params[i].type, s.is_float ? static_cast<int64_t>(s.float_value) : s.int_value,
                                        s.is_float ? s.float_value : static_cast<double>(s.int_value));
      }
      k.pointers.push_back(k.slots[i].bytes);
    }
  }

  ASSIGN_OR_RETURN(std::shared_ptr<cuda::Stream> stream, device->create_stream());
  auto launch = [&](LoadedKernel& k) -> absl::StatusOr<double> {
    cuda::LaunchConfig config;
    for (int d = 0; d < 3; ++d) config.grid[d] = static_cast<uint32_t>(shape.grid[d]);
    config.block = static_cast<uint32_t>(k.function.threads);
    if (cuda::uses_dynamic_shared(k.function)) config.dynamic_shared_bytes = static_cast<uint32_t>(k.function.shared_bytes());
    RETURN_IF_ERROR(device->zero(status->address(), simt::kStatusWords));
    if (k.function.profile_param >= 0) RETURN_IF_ERROR(device->zero(record->address(), profile_words));
    auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(device->launch(*stream, k.entry, config, k.pointers.data(), k.function.name));
    RETURN_IF_ERROR(device->synchronize(*stream, k.function.name, cuda::sync_timeout_ms()));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint32_t words[simt::kStatusWords] = {};
    RETURN_IF_ERROR(device->download(words, status->address(), sizeof words));
    RETURN_IF_ERROR(lowering::status_record_error(k.function, words));
    return seconds;
  };

  ProfileResult result;
  result.repeat = std::max(1, options.repeat);
  result.instrumented_seconds = std::numeric_limits<double>::infinity();
  result.uninstrumented_seconds = std::numeric_limits<double>::infinity();
  // One untimed launch of each first (module load, caches); then alternating spreads noise.
  for (LoadedKernel& k : variants) RETURN_IF_ERROR(launch(k).status());
  for (int i = 0; i < result.repeat; ++i) {
    ASSIGN_OR_RETURN(double plain, launch(variants[0]));
    result.uninstrumented_seconds = std::min(result.uninstrumented_seconds, plain);
    ASSIGN_OR_RETURN(double traced, launch(variants[1]));
    result.instrumented_seconds = std::min(result.instrumented_seconds, traced);
  }
  std::vector<uint32_t> words(profile_words);
  RETURN_IF_ERROR(device->download(words.data(), record->address(), words.size() * 4));
  const int64_t blocks = shape.grid[0] * shape.grid[1] * shape.grid[2];
  ASSIGN_OR_RETURN(std::vector<lowering::ProfiledLane> lanes, lowering::decode_sync_profile(profiled, words, blocks));
  add_device_lanes(profiled, lanes, shape.grid, &result);
  return result;
}

}  // namespace tilert::profile
