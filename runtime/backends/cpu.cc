// The cpu backend row: host memory for buffers, and launches run synchronously by the reference
// interpreter (backends/cpu) with exact dtype semantics. There is exactly one cpu device; it uses
// every hardware thread.
#include <cstdlib>
#include <cstring>
#include <thread>
#include <variant>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_backend.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {

int host_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// Every capability the interpreter implements: all of them.
CapabilitySet all_capabilities(std::string* names) {
  CapabilitySet set = 0;
#define TILERT_X(e, spelling, bit)              \
  set |= capability_bit(Capability::e);         \
  if (!names->empty()) names->append(",");      \
  names->append(spelling);
  TILERT_CAPABILITIES(TILERT_X)
#undef TILERT_X
  return set;
}

absl::StatusOr<std::vector<DeviceRecord>> enumerate_cpu_devices() {
  DeviceRecord cpu;
  cpu.kind = TILERT_DEVICE_CPU;
  cpu.index = 0;
  cpu.name = absl::StrCat("cpu (", host_threads(), " threads)");
  cpu.driver = absl::StrCat("tilert reference interpreter ", TILERT_VERSION);
  cpu.capabilities = all_capabilities(&cpu.features);
  std::vector<DeviceRecord> devices;
  devices.push_back(std::move(cpu));
  return devices;
}

absl::StatusOr<void*> cpu_buffer_alloc(const DeviceRecord&, size_t size) {
  // Zeroed, so a buffer read before any upload is deterministic; calloc(0) may return null.
  void* memory = std::calloc(size == 0 ? 1 : size, 1);
  if (memory == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", size, " bytes on cpu"));
  }
  return memory;
}

void cpu_buffer_free(const DeviceRecord&, void* memory) { std::free(memory); }

absl::Status cpu_buffer_upload(const DeviceRecord&, void* memory, size_t offset, const void* src,
                               size_t size) {
  if (size != 0) std::memcpy(static_cast<uint8_t*>(memory) + offset, src, size);
  return absl::OkStatus();
}

absl::Status cpu_buffer_download(const DeviceRecord&, const void* memory, size_t offset,
                                 void* dst, size_t size) {
  if (size != 0) std::memcpy(dst, static_cast<const uint8_t*>(memory) + offset, size);
  return absl::OkStatus();
}

// The interpreter runs the IR as it is: nothing to lower or keep.
absl::StatusOr<std::shared_ptr<void>> cpu_module_prepare(const DeviceRecord&, const Module&) {
  return std::shared_ptr<void>();
}

absl::StatusOr<std::shared_ptr<void>> cpu_stream_create(const DeviceRecord&) {
  return std::shared_ptr<void>();
}

cpu::ArgValue to_interpreter_arg(const LaunchValue& value) {
  if (const auto* tensor = std::get_if<DeviceTensor>(&value)) {
    return cpu::TensorArg{tensor->memory, tensor->bytes, tensor->dtype};
  }
  if (const auto* integer = std::get_if<int64_t>(&value)) return *integer;
  return std::get<double>(value);
}

// Synchronous: the launch's error is its result, and sync has nothing left to wait for.
absl::Status cpu_launch(const DeviceRecord&, void*, const LaunchRequest& request) {
  std::vector<cpu::ArgValue> args;
  args.reserve(request.args.size());
  for (const LaunchValue& value : request.args) args.push_back(to_interpreter_arg(value));
  cpu::RunOptions options;
  options.precision = cpu::Precision::kExact;
  return cpu::run_kernel(request.module->kernels[request.kernel_index], args, options);
}

absl::Status cpu_sync(const DeviceRecord&, void*) { return absl::OkStatus(); }

}  // namespace

extern const Backend kCpuBackend;
const Backend kCpuBackend = {
    .name = "cpu",
    .kind = TILERT_DEVICE_CPU,
    .enumerate = enumerate_cpu_devices,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_upload = cpu_buffer_upload,
    .buffer_download = cpu_buffer_download,
    .module_prepare = cpu_module_prepare,
    .stream_create = cpu_stream_create,
    .launch = cpu_launch,
    .sync = cpu_sync,
};

}  // namespace tilert::runtime
