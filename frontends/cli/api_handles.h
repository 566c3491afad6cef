// Owning handles for the public C API and the conversion of its statuses into absl::Status, so the
// CLI and the conformance harness release every object on every error path.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "tilert/tilert.h"

namespace tilert::cli {

// The C API's status as an absl::Status: "<what>: <tilert_last_error()> (<status name>)".
// Must be called right after the failing call (the message is per thread, until the next call).
absl::Status api_status(tilert_status status, std::string_view what);

struct ContextDeleter {
  void operator()(tilert_context c) const { tilert_context_destroy(c); }
};
struct ModuleDeleter {
  void operator()(tilert_module m) const { tilert_module_destroy(m); }
};
struct BufferDeleter {
  void operator()(tilert_buffer b) const { tilert_buffer_destroy(b); }
};
struct StreamDeleter {
  void operator()(tilert_stream s) const { tilert_stream_destroy(s); }
};

using ContextHandle = std::unique_ptr<tilert_context_s, ContextDeleter>;
using ModuleHandle = std::unique_ptr<tilert_module_s, ModuleDeleter>;
using BufferHandle = std::unique_ptr<tilert_buffer_s, BufferDeleter>;
using StreamHandle = std::unique_ptr<tilert_stream_s, StreamDeleter>;

// "cpu", "cuda", "hip", "vulkan": the spelling device specs and backend names use.
std::string_view device_kind_name(tilert_device_kind kind);

}  // namespace tilert::cli
