// The compiled-module cache without a GPU: its key changes with each input, the directory comes
// from the environment, entries round-trip, every truncated or damaged entry is a miss (never a
// crash) that the next store repairs, and a directory that cannot be written turns the cache off
// with the reason.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/module_cache.h"
#include "cache_test_util.h"

namespace tilert::cuda {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;
using testing::TempDir;

const std::vector<uint8_t> kModuleBytes = {'T', 'B', 'C', 1, 0, 0, 42, 7};

ModuleCacheKeyInputs base_inputs() {
  ModuleCacheKeyInputs inputs;
  inputs.module_bytes = kModuleBytes;
  inputs.kernel_names = {"gemm", "softmax"};
  inputs.target = "ptx:sm_90a";
  inputs.code_version = "1+0123456789abcdef";
  inputs.compute_major = 9;
  inputs.compute_minor = 0;
  inputs.driver_version = 12080;
  return inputs;
}

ModuleCacheKey key_of(const char* text) {
  ModuleCacheKeyInputs inputs = base_inputs();
  inputs.kernel_names = {text};
  return module_cache_key(inputs);
}

// A binary with every byte value, NULs among them.
std::string sample_binary(size_t size = 300) {
  std::string binary;
  for (size_t i = 0; i < size; ++i) binary.push_back(static_cast<char>(i * 7 + 1));
  return binary;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

TEST_CASE("the cache key is stable and changes with each input") {
  const ModuleCacheKey base = module_cache_key(base_inputs());
  CHECK(module_cache_key(base_inputs()) == base);
  CHECK(base.hex().size() == 64);

  const std::vector<uint8_t> other_bytes = {'T', 'B', 'C', 1, 0, 0, 42, 8};
  std::vector<std::pair<const char*, ModuleCacheKeyInputs>> variants;
  auto vary = [&](const char* what, auto change) {
    ModuleCacheKeyInputs inputs = base_inputs();
    change(inputs);
    variants.emplace_back(what, inputs);
  };
  vary("module bytes", [&](ModuleCacheKeyInputs& i) { i.module_bytes = other_bytes; });
  vary("module bytes cut short", [&](ModuleCacheKeyInputs& i) { i.module_bytes = i.module_bytes.first(7); });
  vary("a kernel name", [](ModuleCacheKeyInputs& i) { i.kernel_names[1] = "softmax2"; });
  vary("kernel order", [](ModuleCacheKeyInputs& i) { std::swap(i.kernel_names[0], i.kernel_names[1]); });
  vary("a kernel fewer", [](ModuleCacheKeyInputs& i) { i.kernel_names.pop_back(); });
  vary("kernel names split elsewhere", [](ModuleCacheKeyInputs& i) { i.kernel_names = {"gemms", "oftmax"}; });
  vary("target", [](ModuleCacheKeyInputs& i) { i.target = "ptx:sm_80"; });
  vary("code version", [](ModuleCacheKeyInputs& i) { i.code_version = "2+0123456789abcdef"; });
  vary("compute major", [](ModuleCacheKeyInputs& i) { i.compute_major = 10; });
  vary("compute minor", [](ModuleCacheKeyInputs& i) { i.compute_minor = 1; });
  vary("driver version", [](ModuleCacheKeyInputs& i) { i.driver_version = 12090; });

  std::set<std::string> seen = {base.hex()};
  for (const auto& [what, inputs] : variants) {
    CAPTURE(what);
    CHECK(seen.insert(module_cache_key(inputs).hex()).second);
  }
}

TEST_CASE("the cache directory comes from the environment") {
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg/cache");
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv dir("TILERT_CACHE_DIR", "/somewhere/tilert-cache");
    CacheLocation location = cache_location_from_environment();
    CHECK(location.root == "/somewhere/tilert-cache");
    CHECK(location.disabled_reason.empty());
  }
  {
    ScopedEnv dir("TILERT_CACHE_DIR", "off");
    CacheLocation location = cache_location_from_environment();
    CHECK(location.root.empty());
    CHECK(location.disabled_reason == "TILERT_CACHE_DIR=off");
    ModuleCache cache = ModuleCache::from_environment();
    CHECK_FALSE(cache.enabled());
    CHECK(cache.disabled_reason() == "TILERT_CACHE_DIR=off");
  }
  {
    ScopedEnv dir("TILERT_CACHE_DIR", "");  // empty is unset
    CHECK(cache_location_from_environment().root == "/xdg/cache/tilert");
  }
  ScopedEnv dir("TILERT_CACHE_DIR", std::nullopt);
  CHECK(cache_location_from_environment().root == "/xdg/cache/tilert");
  {
    ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");  // the XDG rules ignore it
    CHECK(cache_location_from_environment().root == "/home/someone/.cache/tilert");
  }
  {
    ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(cache_location_from_environment().root == "/home/someone/.cache/tilert");
    ScopedEnv empty_home("HOME", "");
    CacheLocation location = cache_location_from_environment();
    CHECK(location.root.empty());
    CHECK(location.disabled_reason.find("HOME") != std::string::npos);
    CHECK_FALSE(ModuleCache::from_environment().enabled());
  }
  {
    TempDir temp;
    ScopedEnv in_temp("TILERT_CACHE_DIR", temp.path() + "/nested/root");
    ModuleCache cache = ModuleCache::from_environment();
    CHECK(cache.enabled());
    CHECK(cache.directory() == temp.path() + "/nested/root/cuda");
    CHECK(fs::is_directory(cache.directory()));
  }
}

TEST_CASE("a stored binary comes back from a lookup") {
  TempDir temp;
  ModuleCache cache(temp.path() + "/cuda");
  REQUIRE(cache.enabled());
  const ModuleCacheKey key = key_of("k"), other = key_of("other");
  std::string reason;
  CHECK_FALSE(cache.lookup(key, &reason).has_value());
  CHECK(reason.find("no entry") != std::string::npos);

  const std::string binary = sample_binary();
  REQUIRE(cache.store(key, binary).ok());
  std::optional<std::string> found = cache.lookup(key, &reason);
  REQUIRE(found.has_value());
  CHECK(*found == binary);
  CHECK(reason.empty());
  CHECK_FALSE(cache.lookup(other).has_value());
  CHECK(fs::file_size(cache.entry_path(key)) == kCacheEntryHeaderBytes + binary.size());

  // A second cache object on the same directory (another process, say) sees it.
  CHECK(ModuleCache(temp.path() + "/cuda").lookup(key) == binary);
  // A store replaces the entry; an empty binary round-trips too.
  REQUIRE(cache.store(key, "replaced").ok());
  CHECK(cache.lookup(key) == std::string("replaced"));
  REQUIRE(cache.store(other, "").ok());
  CHECK(cache.lookup(other) == std::string());

  // Nothing but the two entries is left behind (no temporary files).
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(cache.directory())) names.insert(entry.path().string());
  CHECK(names == std::set<std::string>{cache.entry_path(key), cache.entry_path(other)});
}

TEST_CASE("every truncation of an entry is a miss, and a store repairs it") {
  TempDir temp;
  ModuleCache cache(temp.path());
  const ModuleCacheKey key = key_of("k");
  const std::string binary = sample_binary(100);
  REQUIRE(cache.store(key, binary).ok());
  const std::string entry = read_file(cache.entry_path(key));
  REQUIRE(entry.size() == kCacheEntryHeaderBytes + binary.size());
  for (size_t length = 0; length < entry.size(); ++length) {
    CAPTURE(length);
    write_file(cache.entry_path(key), entry.substr(0, length));
    std::string reason;
    CHECK_FALSE(cache.lookup(key, &reason).has_value());
    CHECK_FALSE(reason.empty());
  }
  // Bytes appended after the binary are damage too.
  write_file(cache.entry_path(key), entry + "x");
  CHECK_FALSE(cache.lookup(key).has_value());
  REQUIRE(cache.store(key, binary).ok());
  CHECK(cache.lookup(key) == binary);
}

TEST_CASE("every flipped byte of an entry is a miss, naming what is wrong") {
  TempDir temp;
  ModuleCache cache(temp.path());
  const ModuleCacheKey key = key_of("k");
  const std::string binary = sample_binary(100);
  REQUIRE(cache.store(key, binary).ok());
  const std::string entry = read_file(cache.entry_path(key));
  for (size_t at = 0; at < entry.size(); ++at) {
    for (int bit : {0, 7}) {
      CAPTURE(at);
      CAPTURE(bit);
      std::string damaged = entry;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      write_file(cache.entry_path(key), damaged);
      std::string reason;
      CHECK_FALSE(cache.lookup(key, &reason).has_value());
      CHECK_FALSE(reason.empty());
      if (at >= kCacheEntryHeaderBytes) CHECK(reason.find("checksum mismatch") != std::string::npos);
    }
  }
  write_file(cache.entry_path(key), entry);
  CHECK(cache.lookup(key) == binary);
}

TEST_CASE("an entry under another key's name, or not a file, is a miss") {
  TempDir temp;
  ModuleCache cache(temp.path());
  const ModuleCacheKey key = key_of("k"), other = key_of("other");
  REQUIRE(cache.store(key, sample_binary()).ok());
  fs::copy_file(cache.entry_path(key), cache.entry_path(other));
  std::string reason;
  CHECK_FALSE(cache.lookup(other, &reason).has_value());
  CHECK(reason.find("another key") != std::string::npos);

  const ModuleCacheKey third = key_of("third");
  fs::create_directory(cache.entry_path(third));
  CHECK_FALSE(cache.lookup(third, &reason).has_value());
  CHECK_FALSE(reason.empty());
}

TEST_CASE("a directory that cannot be created disables the cache, saying why") {
  TempDir temp;
  write_file(temp.path() + "/a-file", "not a directory");
  ModuleCache cache(temp.path() + "/a-file/cuda");
  CHECK_FALSE(cache.enabled());
  MESSAGE("disabled: ", cache.disabled_reason());
  CHECK(cache.disabled_reason().find(temp.path() + "/a-file") != std::string::npos);
  const ModuleCacheKey key = key_of("k");
  std::string reason;
  CHECK_FALSE(cache.lookup(key, &reason).has_value());
  CHECK(reason.find("the cache is off") != std::string::npos);
  absl::Status stored = cache.store(key, "binary");
  CHECK_FALSE(stored.ok());

  ModuleCache file_as_directory(temp.path() + "/a-file");
  CHECK_FALSE(file_as_directory.enabled());
  CHECK(file_as_directory.disabled_reason().find("not a directory") != std::string::npos);
}

TEST_CASE("a read-only directory disables the cache") {
  if (geteuid() == 0) {
    MESSAGE("skipped: running as root, which may write any directory");
    return;
  }
  TempDir temp;
  const std::string dir = temp.path() + "/read-only";
  REQUIRE(mkdir(dir.c_str(), 0500) == 0);
  ModuleCache cache(dir);
  CHECK_FALSE(cache.enabled());
  CHECK(cache.disabled_reason().find("not writable") != std::string::npos);
}

TEST_CASE("a store that fails disables the cache, saying why") {
  TempDir temp;
  const std::string dir = temp.path() + "/gone";
  ModuleCache cache(dir);
  REQUIRE(cache.enabled());
  fs::remove(dir);  // the directory vanishes under the cache
  absl::Status stored = cache.store(key_of("k"), "binary");
  CHECK_FALSE(stored.ok());
  CHECK_FALSE(cache.enabled());
  CHECK(cache.disabled_reason() == stored.message());
  MESSAGE("disabled: ", cache.disabled_reason());
  CHECK_FALSE(cache.store(key_of("k"), "binary").ok());
}

TEST_CASE("concurrent stores and lookups of one key never see half an entry") {
  TempDir temp;
  const ModuleCacheKey key = key_of("k");
  // Large enough that a write takes several system calls' worth of time.
  const std::vector<std::string> binaries = {std::string(1 << 20, 'a'), std::string(1 << 20, 'b'),
                                             std::string((1 << 20) + 3, 'c')};
  std::vector<std::thread> threads;
  std::atomic<int> bad{0}, hits{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      ModuleCache cache(temp.path());
      for (int i = 0; i < 20; ++i) {
        if (!cache.store(key, binaries[t]).ok()) ++bad;
        // Entries are only ever renamed over, never removed: after a store there is always one.
        std::optional<std::string> found = cache.lookup(key);
        if (!found) {
          ++bad;
          continue;
        }
        ++hits;
        if (*found != binaries[0] && *found != binaries[1] && *found != binaries[2]) ++bad;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(bad == 0);
  CHECK(hits > 0);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(temp.path())) ++files;
  CHECK(files == 1);
}

}  // namespace
}  // namespace tilert::cuda
