// What the C API's opaque handles point to. Modules, buffers and streams keep their context's
// device list alive, so destroying the context first never leaves them dangling.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/kernel.h"
#include "runtime/backend.h"
#include "tilert/tilert.h"

struct tilert_device_s {
  const tilert::runtime::Backend* backend = nullptr;
  tilert::runtime::DeviceRecord record;
  std::string label;  // "cpu:0", for messages
};

namespace tilert::runtime {

// One registry row as this context found it.
struct BackendState {
  const Backend* backend = nullptr;
  bool available = false;
  std::string reason;  // why unavailable; "" when available
};

struct ContextState {
  std::vector<BackendState> backends;                     // registry order
  std::vector<std::unique_ptr<tilert_device_s>> devices;  // best first
};

}  // namespace tilert::runtime

struct tilert_context_s {
  std::shared_ptr<tilert::runtime::ContextState> state;
};

struct tilert_kernel_s {
  tilert_module_s* module = nullptr;
  size_t index = 0;  // into module->module.kernels
  const tilert::Kernel& kernel() const;
};

struct tilert_module_s {
  std::shared_ptr<tilert::runtime::ContextState> context;
  tilert_device_s* device = nullptr;
  tilert::Module module;
  std::shared_ptr<void> prepared;  // the backend's lowered form
  std::vector<std::unique_ptr<tilert_kernel_s>> kernels;
};

inline const tilert::Kernel& tilert_kernel_s::kernel() const {
  return module->module.kernels[index];
}

struct tilert_buffer_s {
  std::shared_ptr<tilert::runtime::ContextState> context;
  tilert_device_s* device = nullptr;
  void* memory = nullptr;
  size_t size = 0;
};

struct tilert_stream_s {
  std::shared_ptr<tilert::runtime::ContextState> context;
  tilert_device_s* device = nullptr;
  std::shared_ptr<void> state;
  std::mutex mutex;            // guards first_error: launches may come from several threads
  absl::Status first_error;    // the first execution error since the last sync
};
