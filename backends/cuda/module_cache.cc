// The compiled-module cache (module_cache.h): the key's digest, where the cache lives, and
// entries read and checked, or written atomically.
#include "backends/cuda/module_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

constexpr char kEntryMagic[8] = {'T', 'L', 'R', 'T', 'C', 'U', 'B', 'N'};
constexpr uint32_t kEntryFormatVersion = 1;
constexpr std::string_view kEntrySuffix = ".cubin";
// Far above any cubin tilert makes: a larger file is damage, not an entry to read into memory.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

// Each field as `name=length:value\n`, so no two different inputs give the same stream.
void add_field(Sha256& hash, std::string_view name, std::string_view value) {
  hash.update(name);
  hash.update(absl::StrCat("=", value.size(), ":"));
  hash.update(value);
  hash.update("\n");
}

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

uint64_t get_le(const std::string& in, size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{static_cast<uint8_t>(in[offset + i])} << (8 * i);
  return value;
}

// Detects a damaged binary (flipped bits, a torn write): the first 8 bytes of its SHA-256.
uint64_t binary_checksum(std::string_view bytes) {
  Sha256Digest digest = sha256(bytes);
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{digest[i]} << (8 * i);
  return value;
}

std::string errno_text(int error) { return std::strerror(error); }

// mkdir -p with mode 0700 (the XDG base directory rule for folders it creates), then the checks
// a store needs: a directory we may create files in.
absl::Status make_directories(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("the cache directory is an empty path");
  for (size_t end = 1; end <= path.size(); ++end) {
    if (end < path.size() && path[end] != '/') continue;
    std::string prefix = path.substr(0, end);
    struct stat info;
    if (stat(prefix.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) continue;
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", prefix, ": ", errno_text(errno)));
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a directory"));
  if (access(path.c_str(), W_OK | X_OK) != 0)
    return absl::PermissionDeniedError(absl::StrCat(path, " is not writable: ", errno_text(errno)));
  return absl::OkStatus();
}

const char* non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// The whole file, or why not. Refuses files above kMaxEntryBytes before reading them.
absl::Status read_entry_file(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? absl::NotFoundError("no entry")
                           : absl::UnavailableError(absl::StrCat("cannot open: ", errno_text(errno)));
  struct stat info;
  absl::Status status;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    status = absl::DataLossError("not a regular file");
  } else if (static_cast<uint64_t>(info.st_size) > kMaxEntryBytes) {
    status = absl::DataLossError(absl::StrCat("entry of ", info.st_size, " bytes is too large"));
  } else {
    out->resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (done < out->size()) {
      ssize_t n = read(fd, out->data() + done, out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = absl::UnavailableError(absl::StrCat("cannot read: ", errno_text(errno)));
        break;
      }
      if (n == 0) break;  // shrank while being read: the size check below says so
      done += static_cast<size_t>(n);
    }
    out->resize(done);
  }
  close(fd);
  return status;
}

// OK when `entry` is a whole, undamaged entry for `key`; else what is wrong with it.
absl::Status check_entry(const std::string& entry, const ModuleCacheKey& key) {
  if (entry.size() < kCacheEntryHeaderBytes)
    return absl::DataLossError(absl::StrCat("truncated: ", entry.size(), " bytes, less than the ",
                                            kCacheEntryHeaderBytes, "-byte header"));
  if (std::memcmp(entry.data(), kEntryMagic, sizeof kEntryMagic) != 0)
    return absl::DataLossError("bad magic");
  if (get_le(entry, 8, 4) != kEntryFormatVersion)
    return absl::DataLossError(absl::StrCat("format version ", get_le(entry, 8, 4), ", expected ",
                                            kEntryFormatVersion));
  if (get_le(entry, 12, 4) != kCacheEntryHeaderBytes)
    return absl::DataLossError(absl::StrCat("header size ", get_le(entry, 12, 4)));
  if (std::memcmp(entry.data() + 16, key.digest.data(), key.digest.size()) != 0)
    return absl::DataLossError("the entry holds another key");
  const uint64_t size = get_le(entry, 48, 8);
  if (size != entry.size() - kCacheEntryHeaderBytes)
    return absl::DataLossError(absl::StrCat("the header gives ", size, " bytes of binary, the file has ",
                                            entry.size() - kCacheEntryHeaderBytes));
  std::string_view binary(entry.data() + kCacheEntryHeaderBytes, size);
  if (binary_checksum(binary) != get_le(entry, 56, 8)) return absl::DataLossError("checksum mismatch");
  return absl::OkStatus();
}

// Writes all of `bytes` to a new file `path` (which must not exist).
absl::Status write_new_file(const std::string& path, std::string_view bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::PermissionDeniedError(absl::StrCat("cannot create ", path, ": ", errno_text(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat("cannot write ", path, ": ", errno_text(error)));
    }
    done += static_cast<size_t>(n);
  }
  // No fsync: after a crash an entry may be cut short, which its header check turns into a miss.
  if (close(fd) != 0)
    return absl::ResourceExhaustedError(absl::StrCat("cannot write ", path, ": ", errno_text(errno)));
  return absl::OkStatus();
}

}  // namespace

ModuleCacheKey module_cache_key(const ModuleCacheKeyInputs& inputs) {
  Sha256 hash;
  hash.update("tilert cuda module cache key 1\n");
  add_field(hash, "code_version", inputs.code_version);
  add_field(hash, "target", inputs.target);
  add_field(hash, "compute_capability", absl::StrCat(inputs.compute_major, ".", inputs.compute_minor));
  add_field(hash, "driver_version", absl::StrCat(inputs.driver_version));
  add_field(hash, "kernels", absl::StrCat(inputs.kernel_names.size()));
  for (const std::string& name : inputs.kernel_names) add_field(hash, "kernel", name);
  add_field(hash, "module",
            std::string_view(reinterpret_cast<const char*>(inputs.module_bytes.data()),
                             inputs.module_bytes.size()));
  return ModuleCacheKey{hash.finish()};
}

CacheLocation cache_location_from_environment() {
  if (const char* dir = non_empty_env("TILERT_CACHE_DIR")) {
    if (std::string_view(dir) == "off") return {"", "TILERT_CACHE_DIR=off"};
    return {dir, ""};
  }
  // The XDG base directory specification ignores a relative XDG_CACHE_HOME.
  if (const char* xdg = non_empty_env("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return {absl::StrCat(xdg, "/tilert"), ""};
  if (const char* home = non_empty_env("HOME")) return {absl::StrCat(home, "/.cache/tilert"), ""};
  return {"", "no cache directory: TILERT_CACHE_DIR, XDG_CACHE_HOME and HOME are unset or empty"};
}

ModuleCache ModuleCache::from_environment() {
  CacheLocation location = cache_location_from_environment();
  if (location.root.empty()) return disabled(location.disabled_reason);
  return ModuleCache(absl::StrCat(location.root, "/cuda"));
}

ModuleCache ModuleCache::disabled(std::string reason) {
  ModuleCache cache;
  cache.disabled_reason_ = reason.empty() ? "disabled" : std::move(reason);
  return cache;
}

ModuleCache::ModuleCache(std::string directory) : directory_(std::move(directory)) {
  absl::Status usable = make_directories(directory_);
  if (!usable.ok()) disabled_reason_ = std::string(usable.message());
}

std::string ModuleCache::entry_path(const ModuleCacheKey& key) const {
  return absl::StrCat(directory_, "/", key.hex(), av(kEntrySuffix));
}

std::optional<std::string> ModuleCache::lookup(const ModuleCacheKey& key, std::string* miss_reason) const {
  auto miss = [&](std::string_view why) -> std::optional<std::string> {
    if (miss_reason != nullptr) *miss_reason = std::string(why);
    return std::nullopt;
  };
  if (!enabled()) return miss(absl::StrCat("the cache is off: ", disabled_reason_));
  const std::string path = entry_path(key);
  std::string entry;
  if (absl::Status read = read_entry_file(path, &entry); !read.ok())
    return miss(absl::StrCat(path, ": ", read.message()));
  if (absl::Status checked = check_entry(entry, key); !checked.ok())
    return miss(absl::StrCat(path, ": ", checked.message()));
  if (miss_reason != nullptr) miss_reason->clear();
  // In place: a second buffer of the binary's size would cost its page faults again.
  entry.erase(0, kCacheEntryHeaderBytes);
  return entry;
}

absl::Status ModuleCache::store(const ModuleCacheKey& key, std::string_view binary) {
  if (!enabled()) return absl::FailedPreconditionError(absl::StrCat("the cache is off: ", disabled_reason_));
  std::string entry(kEntryMagic, sizeof kEntryMagic);
  put_le(entry, kEntryFormatVersion, 4);
  put_le(entry, kCacheEntryHeaderBytes, 4);
  entry.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
  put_le(entry, binary.size(), 8);
  put_le(entry, binary_checksum(binary), 8);
  entry.append(binary);

  // Unique among the processes and threads writing this directory: the pid and a counter.
  static std::atomic<uint64_t> counter{0};
  const std::string path = entry_path(key);
  const std::string temporary = absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  absl::Status written = write_new_file(temporary, entry);
  if (written.ok() && rename(temporary.c_str(), path.c_str()) != 0)
    written = absl::PermissionDeniedError(absl::StrCat("cannot rename ", temporary, " to ", path, ": ",
                                                       errno_text(errno)));
  if (!written.ok()) {
    unlink(temporary.c_str());
    disabled_reason_ = std::string(written.message());
  }
  return written;
}

}  // namespace tilert::cuda
