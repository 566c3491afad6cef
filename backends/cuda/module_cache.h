// A disk cache of driver-compiled CUDA binaries (cubins), so that loading a module a second time
// (in this process or a later one) skips the PTX emission and the driver's JIT.
//
// An entry is one file, `<directory>/<key>.cubin`, named by the SHA-256 of everything the binary
// depends on (ModuleCacheKeyInputs). It starts with a header (magic, format version, the key
// again, the binary's size and checksum) that every lookup checks: a truncated, damaged or
// misplaced file is a miss, never a crash, and the next store replaces it. Stores write a
// temporary file in the same directory and rename it over the entry, so a concurrent reader (in
// any process) sees the old file or the new one, never half of one.
//
// Where: $TILERT_CACHE_DIR, else $XDG_CACHE_HOME/tilert, else $HOME/.cache/tilert, each with a
// `cuda` folder. TILERT_CACHE_DIR=off, or none of the three variables set, turns it off. A
// directory that cannot be created or written turns it off too; disabled_reason() says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "backends/cuda/sha256.h"

namespace tilert::cuda {

// Everything a module's compiled binary depends on; each field is part of the key.
struct ModuleCacheKeyInputs {
  std::span<const uint8_t> module_bytes;  // the module's canonical bytecode (write_bytecode)
  std::vector<std::string> kernel_names;  // its entries, in order
  std::string target;                     // the lowering target: "ptx:sm_90a"
  std::string code_version;               // generated_code_version() (code_version.h)
  int compute_major = 0;                  // the device's compute capability
  int compute_minor = 0;
  int driver_version = 0;                 // cuDriverGetVersion: 12040 for CUDA 12.4
};

struct ModuleCacheKey {
  Sha256Digest digest{};
  std::string hex() const { return hex_string(digest); }
  bool operator==(const ModuleCacheKey&) const = default;
};

ModuleCacheKey module_cache_key(const ModuleCacheKeyInputs& inputs);

// The layout of an entry (little-endian): magic "TLRTCUBN", u32 format version, u32 header
// size, the 32-byte key digest, u64 binary size, u64 binary checksum; then the binary.
inline constexpr size_t kCacheEntryHeaderBytes = 64;

// The cache's root folder as the environment gives it (module_cache.h, "Where"); root is empty
// and disabled_reason says why when the cache is off.
struct CacheLocation {
  std::string root;
  std::string disabled_reason;
};
CacheLocation cache_location_from_environment();

class ModuleCache {
 public:
  // `<root>/cuda` for the location the environment gives, or a disabled cache.
  static ModuleCache from_environment();
  static ModuleCache disabled(std::string reason);
  // The cache in `directory`, created with its parents (mode 0700) when missing. When it cannot
  // be created, is not a directory or is not writable, the cache is disabled, saying why.
  explicit ModuleCache(std::string directory);

  bool enabled() const { return disabled_reason_.empty(); }
  // Why the cache is off ("" when it is on).
  const std::string& disabled_reason() const { return disabled_reason_; }
  const std::string& directory() const { return directory_; }
  std::string entry_path(const ModuleCacheKey& key) const;

  // The binary stored for `key`, or nullopt: no entry, an entry that fails a check of its header
  // or checksum, or a disabled cache. `miss_reason` (when given) gets which.
  std::optional<std::string> lookup(const ModuleCacheKey& key, std::string* miss_reason = nullptr) const;
  // Writes the entry for `key` atomically, replacing any entry there. When the write fails the
  // cache disables itself (later calls do nothing) and the error says why.
  absl::Status store(const ModuleCacheKey& key, std::string_view binary);

 private:
  ModuleCache() = default;
  std::string directory_;
  std::string disabled_reason_;
};

}  // namespace tilert::cuda
