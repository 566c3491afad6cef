// The cuda backend row: NVIDIA GPUs through the CUDA driver API (libcuda loaded at run time,
// backends/cuda). A module is prepared per device as one binary with every kernel: from the disk
// cache of driver-compiled binaries (backends/cuda/module_cache.h) when it holds one for this
// module, device and driver, together with the kernels' launch metadata (then nothing is
// lowered); else lower_kernel for the device's PTX target, one PTX module compiled by the driver
// and stored there. Each prepared module owns a zeroed status record per kernel; launches pass it
// as the lowering's last parameter and sync reads back the records of the kernels it waited for.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cuda/code_version.h"
#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/kernel_params.h"
#include "backends/cuda/launch_metadata.h"
#include "backends/cuda/module_cache.h"
#include "backends/cuda/ptx_emit.h"
#include "ir/bytecode/bytecode.h"
#include "ir/status.h"
#include "lowering/lower_kernel.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {

// libcuda and its device list for the whole process, probed on first use, never unloaded.
struct CudaSystem {
  std::shared_ptr<cuda::Driver> driver;
  std::vector<cuda::DeviceInfo> devices;
  absl::Status status;  // why there are no devices, when there are none
};

const CudaSystem& cuda_system() {
  static const CudaSystem* system = [] {
    auto* s = new CudaSystem();
    absl::StatusOr<std::shared_ptr<cuda::Driver>> driver = cuda::Driver::load();
    if (!driver.ok()) {
      s->status = driver.status();
      return s;
    }
    s->driver = *driver;
    absl::StatusOr<std::vector<cuda::DeviceInfo>> devices = s->driver->devices();
    if (!devices.ok()) s->status = devices.status();
    else if (devices->empty()) s->status = absl::UnavailableError("the NVIDIA driver reports no CUDA device");
    else s->devices = std::move(*devices);
    return s;
  }();
  return *system;
}

struct CudaDeviceState {
  cuda::DeviceInfo info;
  std::mutex mutex;
  std::shared_ptr<cuda::Device> device;  // the primary context, retained on first use

  absl::StatusOr<std::shared_ptr<cuda::Device>> open() {
    std::lock_guard<std::mutex> lock(mutex);
    if (device == nullptr) {
      ASSIGN_OR_RETURN(device, cuda::Device::open(cuda_system().driver, info.ordinal));
    }
    return device;
  }
};

CudaDeviceState& state_of(const DeviceRecord& record) {
  return *static_cast<CudaDeviceState*>(record.state.get());
}

CapabilitySet gpu_capabilities(const cuda::DeviceInfo& info, std::string* names) {
  CapabilitySet set = 0;
  // The lowering provides mbarriers, roles, async copies and named barriers (emulating what the
  // hardware lacks); thread-block clusters come with compute capability 9.0.
  std::vector<Capability> provided = {Capability::kF16,     Capability::kBF16,  Capability::kI8,
                                      Capability::kF64,     Capability::kSubgroup, Capability::kAtomic,
                                      Capability::kMbarrier, Capability::kRoles, Capability::kAsyncCopy,
                                      Capability::kNamedBarrier};
  if (info.compute_major >= 9) provided.push_back(Capability::kCluster);
  for (Capability c : provided) {
    set |= capability_bit(c);
    if (!names->empty()) names->append(",");
    names->append(capability_name(c));
  }
  return set;
}

absl::StatusOr<std::vector<DeviceRecord>> enumerate_cuda_devices() {
  const CudaSystem& system = cuda_system();
  if (system.devices.empty()) return system.status;
  std::vector<DeviceRecord> records;
  for (const cuda::DeviceInfo& info : system.devices) {
    DeviceRecord record;
    record.kind = TILERT_DEVICE_CUDA;
    record.index = info.ordinal;
    record.name = info.name;
    record.driver = absl::StrCat("CUDA driver ", info.driver_version / 1000, ".",
                                 info.driver_version % 1000 / 10, " (", system.driver->library_name(), ")");
    std::string capabilities;
    record.capabilities = gpu_capabilities(info, &capabilities);
    record.features = absl::StrCat("sm_", info.compute_major, info.compute_minor, ",",
                                   info.multiprocessors, " SMs,", capabilities);
    record.shared_memory_limit = info.shared_memory_optin;
    absl::StatusOr<std::string> target = cuda::ptx_target_name(info);
    if (!target.ok()) record.cannot_run_kernels = std::string(target.status().message());
    auto state = std::make_shared<CudaDeviceState>();
    state->info = info;
    record.state = std::move(state);
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<void*> cuda_buffer_alloc(const DeviceRecord& device, size_t size) {
  ASSIGN_OR_RETURN(std::shared_ptr<cuda::Device> d, state_of(device).open());
  ASSIGN_OR_RETURN(uint64_t address, d->alloc(size));
  return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

uint64_t address_of(const void* memory) { return reinterpret_cast<uintptr_t>(memory); }

void cuda_buffer_free(const DeviceRecord& device, void* memory) {
  absl::StatusOr<std::shared_ptr<cuda::Device>> d = state_of(device).open();
  if (d.ok()) (*d)->free(address_of(memory));
}

absl::Status cuda_buffer_upload(const DeviceRecord& device, void* memory, size_t offset,
                                const void* src, size_t size) {
  ASSIGN_OR_RETURN(std::shared_ptr<cuda::Device> d, state_of(device).open());
  return d->upload(address_of(memory) + offset, src, size);
}

absl::Status cuda_buffer_download(const DeviceRecord& device, const void* memory, size_t offset,
                                  void* dst, size_t size) {
  ASSIGN_OR_RETURN(std::shared_ptr<cuda::Device> d, state_of(device).open());
  return d->download(dst, address_of(memory) + offset, size);
}

// A module lowered and loaded for one device, with a status record (kStatusWords words) per
// kernel, zeroed at load and again after sync reads a non-zero one.
struct CudaModule : std::enable_shared_from_this<CudaModule> {
  std::shared_ptr<cuda::Device> device;
  std::shared_ptr<cuda::Module> module;
  std::vector<simt::Function> functions;
  std::vector<void*> entries;
  uint64_t status_records = 0;

  uint64_t status_record(size_t kernel) const { return status_records + kernel * simt::kStatusWords * 4; }
  ~CudaModule() {
    if (device != nullptr) device->free(status_records);
  }
};

// TILERT_CACHE_DEBUG set (to anything but "" or "0"): one line on stderr per prepared module
// saying what the compiled-module cache did and, on a miss or when it is off, why.
void cache_note(std::string_view what) {
  const char* debug = std::getenv("TILERT_CACHE_DEBUG");
  if (debug == nullptr || *debug == '\0' || std::string_view(debug) == "0") return;
  std::fprintf(stderr, "tilert: cuda module cache: %.*s\n", static_cast<int>(what.size()), what.data());
}

// Gemms take warpgroup (wgmma) plans where the target has them (LowerOptions::warpgroup_mma; part
// of the compiled-module cache key): on the H200 they run ~1.4x the mma.sync path's rate. The
// environment variable TILERT_CUDA_WGMMA=0 turns them off (mma.sync everywhere).
bool warpgroup_mma_requested() {
  const char* value = std::getenv("TILERT_CUDA_WGMMA");
  return value == nullptr || std::string_view(value) != "0";
}

// Pipelines fed by the tensor-copy engine (LowerOptions::tensor_copies; part of the cache key):
// on unless TILERT_CUDA_TMA=0.
bool tensor_copies_requested() {
  const char* value = std::getenv("TILERT_CUDA_TMA");
  return value == nullptr || std::string_view(value) != "0";
}

absl::StatusOr<std::vector<simt::Function>> lower_module(const Module& module,
                                                          const lowering::TargetDescription& target) {
  std::vector<simt::Function> functions;
  const lowering::LowerOptions options{.warpgroup_mma = warpgroup_mma_requested(),
                                       .tensor_copies = tensor_copies_requested()};
  for (const Kernel& kernel : module.kernels) {
    ASSIGN_OR_RETURN(simt::Function f, lowering::lower_kernel(kernel, target, options));
    functions.push_back(std::move(f));
  }
  return functions;
}

// A module's code on the device and the launch metadata of its functions.
struct LoadedCode {
  std::vector<simt::Function> functions;
  std::shared_ptr<cuda::Module> module;
};

// With the cache on: the stored binary and launch metadata when there is an entry for this
// module, target, device and driver (no lowering, no PTX emission, no JIT); else the module is
// lowered, emitted, compiled by the driver, stored and loaded. With the cache off, or a driver
// without the linker, the PTX is loaded directly, as the driver JIT-compiles it.
absl::StatusOr<LoadedCode> load_code(const cuda::Device& device, const cuda::DeviceInfo& info,
                                     const std::string& target_name, const lowering::TargetDescription& target,
                                     const Module& module) {
  LoadedCode code;
  cuda::ModuleCache cache = cuda::ModuleCache::from_environment();
  if (!cache.enabled() || !device.can_compile()) {
    cache_note(absl::StrCat("off: ", cache.enabled() ? "the driver has no cuLink* entry points"
                                                     : cache.disabled_reason()));
    ASSIGN_OR_RETURN(code.functions, lower_module(module, target));
    ASSIGN_OR_RETURN(std::string ptx, cuda::emit_ptx_module(code.functions, target));
    ASSIGN_OR_RETURN(code.module, device.load_module(ptx));
    return code;
  }
  // The module's bytecode rather than its input: one key for a .tile file and the .tbc made from
  // it, and nothing (comments, spacing) that cannot change the code.
  const std::vector<uint8_t> bytecode = write_bytecode(module);
  cuda::ModuleCacheKeyInputs inputs;
  inputs.module_bytes = bytecode;
  for (const Kernel& k : module.kernels) inputs.kernel_names.push_back(k.name);
  inputs.target = absl::StrCat(target_name, warpgroup_mma_requested() ? "+wgmma" : "",
                               tensor_copies_requested() ? "+tma" : "");
  inputs.code_version = std::string(cuda::generated_code_version());
  inputs.compute_major = info.compute_major;
  inputs.compute_minor = info.compute_minor;
  inputs.driver_version = info.driver_version;
  const cuda::ModuleCacheKey key = cuda::module_cache_key(inputs);

  std::string miss;
  if (std::optional<std::string> stored = cache.lookup(key, &miss)) {
    absl::StatusOr<cuda::UnpackedEntry> entry = cuda::unpack_cache_entry(*stored);
    if (!entry.ok()) {
      miss = absl::StrCat(cache.entry_path(key), ": ", entry.status().message());
    } else if (entry->functions.size() != module.kernels.size()) {
      miss = absl::StrCat(cache.entry_path(key), ": launch metadata for ", entry->functions.size(), " kernels, the module has ",
                          module.kernels.size());
    } else {
      absl::StatusOr<std::shared_ptr<cuda::Module>> loaded = device.load_module_image(entry->cubin);
      if (loaded.ok()) {
        cache_note(absl::StrCat("hit ", cache.entry_path(key)));
        return LoadedCode{std::move(entry->functions), *std::move(loaded)};
      }
      // An entry that passes its checks but that the driver refuses is compiled again and replaced.
      miss = absl::StrCat(cache.entry_path(key), ": the driver refused it: ", loaded.status().message());
    }
  }
  cache_note(absl::StrCat("miss ", miss));
  ASSIGN_OR_RETURN(code.functions, lower_module(module, target));
  ASSIGN_OR_RETURN(std::string ptx, cuda::emit_ptx_module(code.functions, target));
  ASSIGN_OR_RETURN(std::string binary, device.compile_ptx(ptx));
  // A failed store turns the cache off for this load only; the module loads all the same.
  if (absl::Status stored = cache.store(key, cuda::pack_cache_entry(code.functions, binary)); !stored.ok())
    cache_note(absl::StrCat("not stored: ", stored.message()));
  ASSIGN_OR_RETURN(code.module, device.load_module_image(binary));
  return code;
}

absl::StatusOr<std::shared_ptr<void>> cuda_module_prepare(const DeviceRecord& record,
                                                          const Module& module) {
  CudaDeviceState& state = state_of(record);
  ASSIGN_OR_RETURN(std::string name, cuda::ptx_target_name(state.info));
  ASSIGN_OR_RETURN(lowering::TargetDescription target, lowering::parse_target(name));
  auto prepared = std::make_shared<CudaModule>();
  ASSIGN_OR_RETURN(prepared->device, state.open());
  if (module.kernels.empty()) return std::shared_ptr<void>(prepared);
  ASSIGN_OR_RETURN(LoadedCode code, load_code(*prepared->device, state.info, name, target, module));
  prepared->functions = std::move(code.functions);
  prepared->module = std::move(code.module);
  for (const simt::Function& f : prepared->functions) {
    ASSIGN_OR_RETURN(void* entry, prepared->module->function(f.name));
    prepared->entries.push_back(entry);
  }
  const size_t words = prepared->functions.size() * simt::kStatusWords;
  ASSIGN_OR_RETURN(prepared->status_records, prepared->device->alloc(words * 4));
  RETURN_IF_ERROR(prepared->device->zero(prepared->status_records, words));
  return std::shared_ptr<void>(prepared);
}

// A launch whose status record sync still has to read.
struct PendingLaunch {
  std::shared_ptr<const CudaModule> module;
  size_t kernel = 0;
};

struct CudaStream {
  std::shared_ptr<cuda::Device> device;
  std::shared_ptr<cuda::Stream> stream;
  std::mutex mutex;
  std::vector<PendingLaunch> pending;
};

absl::StatusOr<std::shared_ptr<void>> cuda_stream_create(const DeviceRecord& record) {
  auto stream = std::make_shared<CudaStream>();
  ASSIGN_OR_RETURN(stream->device, state_of(record).open());
  ASSIGN_OR_RETURN(stream->stream, stream->device->create_stream());
  return std::shared_ptr<void>(stream);
}

// A scalar launch value as the PTX entry declares it (backends/cuda/kernel_params.h).
cuda::ParamSlot scalar_slot(DType type, const LaunchValue& value) {
  const bool is_int = std::holds_alternative<int64_t>(value);
  const int64_t i = is_int ? std::get<int64_t>(value) : static_cast<int64_t>(std::get<double>(value));
  return cuda::scalar_param(type, i, is_int ? static_cast<double>(i) : std::get<double>(value));
}

// Encodes tensor map `m` of `f` for this launch's tensor; false when it cannot be (a row length
// that is not a multiple of 16 bytes, say): the kernel then takes its cp.async path.
bool encode_tensor_map(const cuda::Device& device, const simt::Function& f, const LaunchRequest& request, size_t m,
                       cuda::TensorMapSlot& slot) {
  const simt::TensorMap& spec = f.tensor_maps[m];
  if (spec.param >= request.args.size() || spec.param >= request.shape->tensor_shapes.size()) return false;
  const auto* tensor = std::get_if<DeviceTensor>(&request.args[spec.param]);
  if (tensor == nullptr) return false;
  return device.encode_tensor_map(spec, tensor->dtype, address_of(tensor->memory),
                                  request.shape->tensor_shapes[spec.param], slot.bytes).ok();
}

absl::Status cuda_launch(const DeviceRecord&, void* stream_state, const LaunchRequest& request) {
  auto* stream = static_cast<CudaStream*>(stream_state);
  const auto* prepared = static_cast<const CudaModule*>(request.prepared_module);
  if (prepared == nullptr || request.kernel_index >= prepared->functions.size())
    return absl::InternalError("cuda launch: kernel not prepared");
  const simt::Function& f = prepared->functions[request.kernel_index];

  std::vector<cuda::ParamSlot> slots(f.params.size());
  std::vector<void*> pointers(f.params.size() + f.tensor_maps.size());
  std::vector<cuda::TensorMapSlot> maps(f.tensor_maps.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    pointers[i] = slots[i].bytes;
    const simt::Param& p = f.params[i];
    if (static_cast<int32_t>(i) == f.status_param) {
      slots[i] = cuda::address_param(prepared->status_record(request.kernel_index));
    } else if (static_cast<int32_t>(i) == f.tensor_maps_param) {
      // The kernel copies with the tensor-copy engine only when every map could be encoded.
      bool ready = true;
      for (size_t m = 0; m < maps.size() && ready; ++m) ready = encode_tensor_map(*stream->device, f, request, m, maps[m]);
      slots[i] = cuda::scalar_param(DType::kU32, ready ? 1 : 0, 0);
    } else if (i >= request.args.size()) {
      return absl::InternalError(absl::StrCat("kernel ", f.name, ": no argument for parameter ", p.name));
    } else if (p.is_array) {
      const auto* tensor = std::get_if<DeviceTensor>(&request.args[i]);
      if (tensor == nullptr)
        return absl::InternalError(absl::StrCat("kernel ", f.name, ": ", p.name, " is not a tensor"));
      // Indices are i32 in the lowered code.
      if (tensor->bytes / dtype_size(tensor->dtype) >= (uint64_t{1} << 31))
        return absl::InvalidArgumentError(absl::StrCat(
            "kernel ", f.name, ": tensor ", p.name, " has ", tensor->bytes / dtype_size(tensor->dtype),
            " elements; the cuda backend supports fewer than 2^31"));
      slots[i] = cuda::address_param(address_of(tensor->memory));
    } else {
      slots[i] = scalar_slot(p.type, request.args[i]);
    }
  }
  for (size_t m = 0; m < maps.size(); ++m) pointers[f.params.size() + m] = maps[m].bytes;
  cuda::LaunchConfig config;
  for (int d = 0; d < 3; ++d) {
    config.grid[d] = static_cast<uint32_t>(request.shape->grid[d]);
    // The entry's cluster shape is fixed (.reqnctapercluster): the grid must tile into it.
    if (config.grid[d] % static_cast<uint32_t>(f.cluster[d]) != 0)
      return absl::InvalidArgumentError(absl::StrCat("kernel ", f.name, ": grid dimension ", d, " (", config.grid[d],
                                                     " blocks) is not a multiple of the cluster's (", f.cluster[d], ")"));
  }
  config.block = static_cast<uint32_t>(f.threads);
  if (cuda::uses_dynamic_shared(f)) config.dynamic_shared_bytes = static_cast<uint32_t>(f.shared_bytes());
  RETURN_IF_ERROR(stream->device->launch(*stream->stream, prepared->entries[request.kernel_index], config,
                                         pointers.data(), f.name));
  std::lock_guard<std::mutex> lock(stream->mutex);
  stream->pending.push_back({prepared->shared_from_this(), request.kernel_index});
  return absl::OkStatus();
}

absl::Status cuda_sync(const DeviceRecord&, void* stream_state) {
  auto* stream = static_cast<CudaStream*>(stream_state);
  std::lock_guard<std::mutex> lock(stream->mutex);
  std::vector<std::string> names;
  for (const PendingLaunch& p : stream->pending) names.push_back(p.module->functions[p.kernel].name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  absl::Status first = stream->device->synchronize(
      *stream->stream, names.empty() ? "(none)" : absl::StrJoin(names, ", "), cuda::sync_timeout_ms());
  // After a timeout the kernels may still write their records: leave them for a later sync.
  if (!first.ok()) return first;
  std::set<std::pair<const CudaModule*, size_t>> read;
  for (const PendingLaunch& p : stream->pending) {
    if (!read.insert({p.module.get(), p.kernel}).second) continue;
    uint32_t words[simt::kStatusWords] = {};
    uint64_t record = p.module->status_record(p.kernel);
    absl::Status status = stream->device->download(words, record, sizeof words);
    if (status.ok()) status = lowering::status_record_error(p.module->functions[p.kernel], words);
    if (words[0] != 0) {
      absl::Status cleared = stream->device->zero(record, simt::kStatusWords);
      if (status.ok()) status = cleared;
    }
    if (first.ok()) first = status;
  }
  stream->pending.clear();
  return first;
}

}  // namespace

extern const Backend kCudaBackend;
const Backend kCudaBackend = {
    .name = "cuda",
    .kind = TILERT_DEVICE_CUDA,
    .enumerate = enumerate_cuda_devices,
    .buffer_alloc = cuda_buffer_alloc,
    .buffer_free = cuda_buffer_free,
    .buffer_upload = cuda_buffer_upload,
    .buffer_download = cuda_buffer_download,
    .module_prepare = cuda_module_prepare,
    .stream_create = cuda_stream_create,
    .launch = cuda_launch,
    .sync = cuda_sync,
};

}  // namespace tilert::runtime
