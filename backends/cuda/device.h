// One CUDA device through its primary context: device memory, modules JIT-compiled from PTX or
// loaded from binaries the driver compiled before, streams, launches and synchronization with a
// host-side time limit. CUDA handles appear as opaque values so that users of this header need
// no cuda.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "backends/cuda/driver.h"
#include "lowering/simt.h"

namespace tilert::cuda {

class Device;

// A module loaded from PTX or a binary; unloaded when the last holder lets go.
class Module {
 public:
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // The entry `name` (an opaque CUfunction). NotFound names the entry.
  absl::StatusOr<void*> function(const std::string& name) const;

 private:
  friend class Device;
  Module(std::shared_ptr<const Device> device, void* module) : device_(std::move(device)), module_(module) {}
  std::shared_ptr<const Device> device_;
  void* module_;
};

// A stream; launches on it run in order. Destroyed when the last holder lets go.
class Stream {
 public:
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* handle() const { return stream_; }

 private:
  friend class Device;
  Stream(std::shared_ptr<const Device> device, void* stream) : device_(std::move(device)), stream_(stream) {}
  std::shared_ptr<const Device> device_;
  void* stream_;
};

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block = 1;                  // threads, x only
  uint32_t dynamic_shared_bytes = 0;   // above 48 KiB the function's limit is raised first
};

// How long a synchronize waits: TILERT_SYNC_TIMEOUT_MS (milliseconds) when set to a positive
// number, else 10000.
int64_t sync_timeout_ms();

class Device : public std::enable_shared_from_this<Device> {
 public:
  // Retains the primary context of device `ordinal`.
  static absl::StatusOr<std::shared_ptr<Device>> open(std::shared_ptr<Driver> driver, int ordinal);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Driver& driver() const { return *driver_; }
  int ordinal() const { return ordinal_; }
  // Makes the primary context current on the calling thread (every call below does this).
  absl::Status make_current() const;

  absl::StatusOr<uint64_t> alloc(size_t bytes) const;
  void free(uint64_t address) const;
  absl::Status upload(uint64_t address, const void* src, size_t bytes) const;
  absl::Status download(void* dst, uint64_t address, size_t bytes) const;
  absl::Status zero(uint64_t address, size_t words32) const;

  // JIT-compiles `ptx` and loads it; a failure carries the JIT's error log.
  absl::StatusOr<std::shared_ptr<Module>> load_module(const std::string& ptx) const;
  // Whether the driver has the linker compile_ptx needs (cuLink*, optional entry points).
  bool can_compile() const;
  // The driver's compile of `ptx` for this device (cuLinkCreate / cuLinkAddData /
  // cuLinkComplete) as a binary (a cubin) that load_module_image takes, here or in a later
  // process on the same device and driver. A failure carries the JIT's error log; Unavailable
  // when the driver lacks the linker.
  absl::StatusOr<std::string> compile_ptx(const std::string& ptx) const;
  // Loads a binary from compile_ptx; a failure (a binary for another device, say) carries the
  // driver's error log. InvalidArgument, before any driver call, for bytes without an ELF header.
  absl::StatusOr<std::shared_ptr<Module>> load_module_image(std::string_view image) const;
  absl::StatusOr<std::shared_ptr<Stream>> create_stream() const;

  // Launches `function` (from load_module) with `params` (one pointer per kernel parameter, to
  // its value). `kernel` names it in errors.
  absl::Status launch(const Stream& stream, void* function, const LaunchConfig& config,
                      void** params, std::string_view kernel) const;
  // Encodes tensor map `spec` (lowering/simt.h) for the row-major, contiguous tensor of `type`
  // at `address` with `dims` (outermost first) into `out` (128 bytes, 64-byte aligned), as the
  // kernel's tensor_copy statements read it. FailedPrecondition, before any driver call, for what
  // a map cannot describe (an address or row stride not a multiple of 16 bytes, an empty or too
  // large tensor, an element type the engine lacks); Unavailable without the entry point.
  absl::Status encode_tensor_map(const simt::TensorMap& spec, DType type, uint64_t address,
                                 std::span<const int64_t> dims, void* out) const;
  // Waits for everything on `stream`, polling so that a kernel that never finishes gives
  // DeadlineExceeded "kernel K did not finish within N ms" instead of a hang.
  absl::Status synchronize(const Stream& stream, std::string_view kernel, int64_t timeout_ms) const;

 private:
  // cuModuleLoadDataEx of `image` (PTX text or a binary); `what` names it in errors.
  absl::StatusOr<std::shared_ptr<Module>> load_image(const void* image, std::string_view what) const;
  Device(std::shared_ptr<Driver> driver, int ordinal, int device, void* context)
      : driver_(std::move(driver)), ordinal_(ordinal), device_(device), context_(context) {}
  std::shared_ptr<Driver> driver_;
  int ordinal_;
  int device_;     // CUdevice
  void* context_;  // CUcontext (the primary context)
};

}  // namespace tilert::cuda
