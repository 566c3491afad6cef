// The one list of backends. Adding a backend: its folder defines `const Backend kXxxBackend`, and
// one row goes here, at its place in the order of preference (best first).
#include "runtime/backend.h"

#define TILERT_BACKENDS(X) \
  X(kCudaBackend)          \
  X(kHipBackend)           \
  X(kVulkanBackend)        \
  X(kCpuBackend)

namespace tilert::runtime {

#define TILERT_X(backend) extern const Backend backend;
TILERT_BACKENDS(TILERT_X)
#undef TILERT_X

namespace {
constexpr const Backend* kRegistry[] = {
#define TILERT_X(backend) &backend,
    TILERT_BACKENDS(TILERT_X)
#undef TILERT_X
};
}  // namespace

std::span<const Backend* const> backend_registry() { return kRegistry; }

std::string missing_hooks(const Backend& backend) {
  std::string missing;
  auto require = [&](bool present, const char* hook) {
    if (present) return;
    if (!missing.empty()) missing += ", ";
    missing += hook;
  };
  require(backend.buffer_alloc != nullptr, "buffer_alloc");
  require(backend.buffer_free != nullptr, "buffer_free");
  require(backend.buffer_upload != nullptr, "buffer_upload");
  require(backend.buffer_download != nullptr, "buffer_download");
  require(backend.module_prepare != nullptr, "module_prepare");
  require(backend.stream_create != nullptr, "stream_create");
  require(backend.launch != nullptr, "launch");
  require(backend.sync != nullptr, "sync");
  return missing;
}

}  // namespace tilert::runtime
