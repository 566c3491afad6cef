// The hip backend row: AMD GPUs through the HIP runtime (libamdhip64, loaded at run time) with
// kernels compiled in process by comgr (backends/hip). Without ROCm, enumerate says so and
// nothing else is called. A module is prepared per device: lower_kernel, the AMDGCN emitter,
// comgr, hipModuleLoadData. Launches pack arguments as the kernel's argument segment and give
// each launch a zeroed status record that sync reads back.
#include <cstring>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "backends/hip/comgr.h"
#include "backends/hip/driver.h"
#include "backends/hip/emit.h"
#include "ir/status.h"
#include "lowering/lower_kernel.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {

// libamdhip64 for the whole process, loaded on first use and never unloaded.
struct HipSystem {
  std::shared_ptr<hip::Driver> driver;
  std::vector<hip::DeviceInfo> devices;
  absl::Status status;  // why there are no devices, when there are none
};

const HipSystem& hip_system() {
  static const HipSystem* system = [] {
    auto* s = new HipSystem();
    absl::StatusOr<std::shared_ptr<hip::Driver>> driver = hip::Driver::load();
    if (!driver.ok()) {
      s->status = driver.status();
      return s;
    }
    s->driver = *driver;
    absl::StatusOr<std::vector<hip::DeviceInfo>> devices = s->driver->devices();
    if (devices.ok()) s->devices = std::move(*devices);
    else s->status = devices.status();
    return s;
  }();
  return *system;
}

struct HipDeviceState {
  hip::DeviceInfo info;
  lowering::TargetDescription target;
  int wave_size = 64;
};

const HipDeviceState& state_of(const DeviceRecord& record) {
  return *static_cast<const HipDeviceState*>(record.state.get());
}

const hip::Driver& driver() { return *hip_system().driver; }

absl::StatusOr<std::vector<DeviceRecord>> enumerate_hip_devices() {
  const HipSystem& system = hip_system();
  if (system.devices.empty()) return system.status;
  std::vector<DeviceRecord> records;
  for (const hip::DeviceInfo& info : system.devices) {
    auto state = std::make_shared<HipDeviceState>();
    state->info = info;
    absl::StatusOr<lowering::TargetDescription> target = lowering::parse_target("amdgcn:" + info.arch);
    DeviceRecord record;
    record.kind = TILERT_DEVICE_HIP;
    record.index = info.index;
    record.name = absl::StrCat(info.name, " (", info.arch, ")");
    record.driver = absl::StrCat(driver().version(), ", ", driver().library_name());
    if (target.ok()) {
      state->target = *target;
      state->wave_size = target->min_subgroup_size();  // HIP's default: wave32 on RDNA
      record.shared_memory_limit = target->shared_memory_per_block;
      record.features = absl::StrCat("wave", state->wave_size, ", LDS ",
                                     target->shared_memory_per_block / 1024, " KB");
    } else {
      record.cannot_run_kernels = absl::StrCat("no target description for ", info.arch);
    }
    record.state = std::move(state);
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<void*> hip_buffer_alloc(const DeviceRecord& device, size_t size) {
  return driver().allocate(device.index, size);
}

void hip_buffer_free(const DeviceRecord& device, void* memory) { driver().free(device.index, memory); }

absl::Status hip_buffer_upload(const DeviceRecord& device, void* memory, size_t offset,
                               const void* src, size_t size) {
  return driver().upload(device.index, static_cast<char*>(memory) + offset, src, size);
}

absl::Status hip_buffer_download(const DeviceRecord& device, const void* memory, size_t offset,
                                 void* dst, size_t size) {
  return driver().download(device.index, dst, static_cast<const char*>(memory) + offset, size);
}

// One kernel of a prepared module.
struct HipKernel {
  simt::Function function;
  void* entry = nullptr;
  size_t kernarg_size = 0;
};

struct HipModule {
  int device = 0;
  std::vector<void*> modules;  // one code object per kernel, unloaded together
  std::vector<HipKernel> kernels;
  ~HipModule() {
    for (void* m : modules) driver().unload_module(device, m);
  }
};

absl::StatusOr<std::shared_ptr<void>> hip_module_prepare(const DeviceRecord& device,
                                                         const Module& module) {
  const HipDeviceState& state = state_of(device);
  static absl::StatusOr<std::shared_ptr<hip::Comgr>> comgr = hip::Comgr::load();
  auto prepared = std::make_shared<HipModule>();
  prepared->device = device.index;
  for (const Kernel& kernel : module.kernels) {
    HipKernel k;
    ASSIGN_OR_RETURN(k.function, lowering::lower_kernel(kernel, state.target));
    ASSIGN_OR_RETURN(std::string ir, hip::emit_amdgcn_llvm_ir(k.function, state.target, state.wave_size));
    if (!comgr.ok()) return comgr.status();
    ASSIGN_OR_RETURN(hip::CodeObject code, (*comgr)->compile(ir, state.info.arch));
    ASSIGN_OR_RETURN(void* loaded, driver().load_module(device.index, code.bytes));
    prepared->modules.push_back(loaded);
    ASSIGN_OR_RETURN(k.entry, driver().kernel(loaded, k.function.name));
    for (const hip::KernelMetadata& m : code.kernels) {
      if (m.name == k.function.name) k.kernarg_size = static_cast<size_t>(m.kernarg_segment_size);
    }
    prepared->kernels.push_back(std::move(k));
  }
  return std::shared_ptr<void>(prepared);
}

// A launch whose status record sync still has to read.
struct PendingLaunch {
  const simt::Function* function = nullptr;
  void* status = nullptr;
};

struct HipStream {
  int device = 0;
  void* stream = nullptr;
  std::mutex mutex;
  std::vector<PendingLaunch> pending;
  ~HipStream() {
    for (const PendingLaunch& p : pending) driver().free(device, p.status);
    driver().destroy_stream(device, stream);
  }
};

absl::StatusOr<std::shared_ptr<void>> hip_stream_create(const DeviceRecord& device) {
  auto stream = std::make_shared<HipStream>();
  stream->device = device.index;
  ASSIGN_OR_RETURN(stream->stream, driver().create_stream(device.index));
  return std::shared_ptr<void>(stream);
}

// Appends one scalar argument in the width of `type`.
void add_scalar(hip::KernargBuilder& args, DType type, const LaunchValue& value) {
  double f = std::holds_alternative<double>(value) ? std::get<double>(value) : 0.0;
  int64_t i = std::holds_alternative<int64_t>(value) ? std::get<int64_t>(value) : static_cast<int64_t>(f);
  if (std::holds_alternative<int64_t>(value)) f = static_cast<double>(i);
  switch (type) {
    case DType::kBool: case DType::kI8: case DType::kU8: { uint8_t v = static_cast<uint8_t>(i); args.add(&v, 1); return; }
    case DType::kI32: case DType::kU32: { uint32_t v = static_cast<uint32_t>(i); args.add(&v, 4); return; }
    case DType::kI64: args.add(&i, 8); return;
    case DType::kF16: { uint16_t v = f32_to_f16_bits(static_cast<float>(f)); args.add(&v, 2); return; }
    case DType::kBF16: { uint16_t v = f32_to_bf16_bits(static_cast<float>(f)); args.add(&v, 2); return; }
    case DType::kF32: { float v = static_cast<float>(f); args.add(&v, 4); return; }
    case DType::kF64: args.add(&f, 8); return;
  }
}

absl::Status hip_launch(const DeviceRecord& device, void* stream_state, const LaunchRequest& request) {
  const auto* prepared = static_cast<const HipModule*>(request.prepared_module);
  const HipKernel& kernel = prepared->kernels.at(request.kernel_index);
  auto* stream = static_cast<HipStream*>(stream_state);
  const simt::Function& f = kernel.function;

  void* status = nullptr;
  if (f.status_param >= 0) {
    ASSIGN_OR_RETURN(status, driver().allocate(device.index, simt::kStatusWords * 4));
    absl::Status zeroed = driver().zero(device.index, status, simt::kStatusWords * 4);
    if (!zeroed.ok()) {
      driver().free(device.index, status);
      return zeroed;
    }
  }
  hip::KernargBuilder args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (static_cast<int32_t>(i) == f.status_param) {
      args.add(&status, sizeof(void*));
    } else if (i >= request.args.size()) {
      return absl::InternalError(absl::StrCat("kernel ", f.name, ": no argument for parameter ", f.params[i].name));
    } else if (f.params[i].is_array) {
      const auto* tensor = std::get_if<DeviceTensor>(&request.args[i]);
      if (tensor == nullptr) return absl::InternalError(absl::StrCat("kernel ", f.name, ": ", f.params[i].name, " is not a tensor"));
      void* memory = tensor->memory;
      args.add(&memory, sizeof(void*));
    } else {
      add_scalar(args, f.params[i].type, request.args[i]);
    }
  }
  std::vector<uint8_t> kernargs = args.finish(kernel.kernarg_size);
  uint32_t grid[3];
  for (int d = 0; d < 3; ++d) grid[d] = static_cast<uint32_t>(request.shape->grid[d]);
  absl::Status launched = driver().launch(device.index, kernel.entry, grid,
                                          static_cast<uint32_t>(f.threads), stream->stream, kernargs);
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (status != nullptr) {
    if (launched.ok()) stream->pending.push_back({&f, status});
    else driver().free(device.index, status);
  }
  return launched;
}

absl::Status hip_sync(const DeviceRecord& device, void* stream_state) {
  auto* stream = static_cast<HipStream*>(stream_state);
  absl::Status waited = driver().wait(device.index, stream->stream, hip::sync_timeout());
  std::lock_guard<std::mutex> lock(stream->mutex);
  absl::Status first = waited;
  for (const PendingLaunch& p : stream->pending) {
    uint32_t words[simt::kStatusWords] = {};
    if (waited.ok()) {
      absl::Status read = driver().download(device.index, words, p.status, sizeof(words));
      absl::Status record = read.ok() ? lowering::status_record_error(*p.function, words) : read;
      if (first.ok()) first = record;
    }
    // After a timeout the kernel may still write its record: keep the memory rather than free it.
    if (waited.ok()) driver().free(device.index, p.status);
  }
  stream->pending.clear();
  return first;
}

}  // namespace

extern const Backend kHipBackend;
const Backend kHipBackend = {
    .name = "hip",
    .kind = TILERT_DEVICE_HIP,
    .enumerate = enumerate_hip_devices,
    .buffer_alloc = hip_buffer_alloc,
    .buffer_free = hip_buffer_free,
    .buffer_upload = hip_buffer_upload,
    .buffer_download = hip_buffer_download,
    .module_prepare = hip_module_prepare,
    .stream_create = hip_stream_create,
    .launch = hip_launch,
    .sync = hip_sync,
};

}  // namespace tilert::runtime
