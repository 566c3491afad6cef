// What the runtime needs from a device backend: a small struct of hooks. Every backend this build
// knows is one row of the constant registry in backend_registry.cc; the runtime never names a
// backend anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "ir/param_eval.h"
#include "tilert/tilert.h"

namespace tilert::runtime {

// One device as its backend describes it. The strings back tilert_device_info.
struct DeviceRecord {
  tilert_device_kind kind = TILERT_DEVICE_CPU;
  int32_t index = 0;                  // among the devices of its backend
  std::string name;                   // "cpu (8 threads)", "NVIDIA H200"
  std::string driver;                 // driver / API version
  std::string features;               // comma-separated
  CapabilitySet capabilities = 0;     // what kernels may declare with requires(...)
  int64_t shared_memory_limit = 0;    // bytes per block for the verifier; 0: unlimited
  int64_t mbarrier_bytes = 8;         // shared bytes per mbarrier (0: emulated in registers)
  // A GPU API implemented on the host CPU (lavapipe): it runs kernels, but `auto` prefers the
  // reference backend to it (its shader compiles are slow and it is a test vehicle).
  bool software = false;
  // Why this device cannot run kernels yet ("" when it can): a backend whose devices are found
  // before its lowerer exists. Such devices still hold buffers; the context lists them after
  // every device that can run kernels, so `auto` never picks them.
  std::string cannot_run_kernels;
  std::shared_ptr<void> state;        // the backend's own per-device state
};

// A tensor argument as the backend sees it: device memory holding `bytes` bytes of `dtype`.
struct DeviceTensor {
  void* memory = nullptr;
  size_t bytes = 0;
  DType dtype = DType::kF32;
};
// One value per kernel parameter, in signature order: int64_t for integer and bool scalars,
// double for float scalars, DeviceTensor for tensors.
using LaunchValue = std::variant<int64_t, double, DeviceTensor>;

// A launch whose arguments have been checked against the kernel's signature.
struct LaunchRequest {
  const Module* module = nullptr;
  const void* prepared_module = nullptr;  // what module_prepare returned
  size_t kernel_index = 0;
  std::span<const LaunchValue> args;
  const LaunchShape* shape = nullptr;     // grid, threads and tensor shapes for these arguments
};

// The hooks. Errors are absl::Status with the code the C API reports (see errors.h): for example
// ResourceExhausted for out-of-memory, Aborted for a deadlock, DeadlineExceeded for a timeout.
struct Backend {
  const char* name;  // "cpu", "cuda", ...; also the device-spec spelling
  tilert_device_kind kind;

  // Devices of this backend, best first; Unavailable with the reason when there are none.
  absl::StatusOr<std::vector<DeviceRecord>> (*enumerate)();

  absl::StatusOr<void*> (*buffer_alloc)(const DeviceRecord& device, size_t size);
  void (*buffer_free)(const DeviceRecord& device, void* memory);
  // The runtime has checked that [offset, offset + size) lies inside the buffer.
  absl::Status (*buffer_upload)(const DeviceRecord& device, void* memory, size_t offset,
                                const void* src, size_t size);
  absl::Status (*buffer_download)(const DeviceRecord& device, const void* memory, size_t offset,
                                  void* dst, size_t size);

  // Lowers a verified module for the device; may return null when there is nothing to keep.
  absl::StatusOr<std::shared_ptr<void>> (*module_prepare)(const DeviceRecord& device,
                                                          const Module& module);

  // Per-stream state (may be null). Launches on one stream run in order.
  absl::StatusOr<std::shared_ptr<void>> (*stream_create)(const DeviceRecord& device);
  absl::Status (*launch)(const DeviceRecord& device, void* stream, const LaunchRequest& request);
  // Waits for every launch on the stream; returns the first execution error among them.
  absl::Status (*sync)(const DeviceRecord& device, void* stream);
};

// Every backend this build knows, in order of preference (GPUs before the CPU).
std::span<const Backend* const> backend_registry();

// "" when every hook a device of `backend` needs is present, else the missing hooks' names.
std::string missing_hooks(const Backend& backend);

}  // namespace tilert::runtime
