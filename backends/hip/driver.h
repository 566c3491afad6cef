// The HIP runtime (libamdhip64) loaded at run time: devices, memory, code objects and launches.
// No ROCm is needed to build; without it load() says which libraries were tried.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilert::hip {

struct DeviceInfo {
  int index = 0;
  std::string name;  // "AMD Instinct MI210"
  std::string arch;  // "gfx90a", without target features such as ":sramecc+:xnack-"
};

class Driver {
 public:
  // Loads libamdhip64 and calls hipInit. Unavailable, "libamdhip64.so not found: ROCm is not
  // installed (tried ...)", when no library loads.
  static absl::StatusOr<std::shared_ptr<Driver>> load();

  const std::string& library_name() const { return library_name_; }
  std::string version() const;
  absl::StatusOr<std::vector<DeviceInfo>> devices() const;

  absl::StatusOr<void*> allocate(int device, size_t size) const;
  void free(int device, void* memory) const;
  absl::Status upload(int device, void* dst, const void* src, size_t size) const;
  absl::Status download(int device, void* dst, const void* src, size_t size) const;
  absl::Status zero(int device, void* dst, size_t size) const;

  // A loaded code object and one kernel of it.
  absl::StatusOr<void*> load_module(int device, std::string_view code_object) const;
  void unload_module(int device, void* module) const;
  absl::StatusOr<void*> kernel(void* module, const std::string& name) const;

  // Launches with the kernel arguments packed as the kernel's argument segment (`kernargs`).
  absl::Status launch(int device, void* kernel, const uint32_t grid[3], uint32_t threads,
                      void* stream, std::vector<uint8_t>& kernargs) const;
  absl::StatusOr<void*> create_stream(int device) const;
  void destroy_stream(int device, void* stream) const;
  // Waits for the stream; DeadlineExceeded after `limit`.
  absl::Status wait(int device, void* stream, std::chrono::milliseconds limit) const;

  struct Symbols;
  ~Driver();

 private:
  Driver() = default;
  absl::Status check(int error, std::string_view what) const;

  std::string library_name_;
  void* handle_ = nullptr;
  std::unique_ptr<Symbols> symbols_;
};

// TILERT_SYNC_TIMEOUT_MS from the environment, else 10000.
std::chrono::milliseconds sync_timeout();

// Kernel arguments packed like LLVM's amdgpu_kernel argument segment: each at its natural
// alignment. Append in parameter order.
class KernargBuilder {
 public:
  void add(const void* value, size_t size);
  // Pads the segment to `segment_size` (what the code object's metadata says) when larger.
  std::vector<uint8_t> finish(size_t segment_size);

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace tilert::hip
