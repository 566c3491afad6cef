// The runtime's path through the compiled-module cache, without a GPU: the process loads
// fake_libcuda (a stand-in driver that counts what it is asked to do) before the runtime looks
// for libcuda.so.1, which then finds it by its soname. Asserts, through the C API, that a first
// load compiles and stores, that a load in a new context compiles nothing (no PTX emitted, no
// JIT) and takes the stored binary, that a damaged entry or one the driver refuses is compiled
// again and replaced, that .tile text and the .tbc made from it share an entry, and that with
// the cache off or unwritable the PTX is loaded as before.
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/module_cache.h"
#include "cache_test_util.h"
#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"
#include "tilert/tilert.h"

namespace tilert::cuda {
namespace {

using testing::ScopedEnv;
using testing::TempDir;
using testing::entries_in;
using testing::inode_of;
namespace fs = std::filesystem;

// fake_libcuda, loaded once for the whole process before any context exists.
int fake_count(const char* what) {
  static auto* counter = [] {
    void* handle = dlopen(TILERT_FAKE_LIBCUDA, RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) FAIL(std::string(dlerror()));
    auto* fn = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "fake_cuda_count"));
    if (fn == nullptr) FAIL("fake_libcuda has no fake_cuda_count");
    return fn;
  }();
  return counter(what);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kGeluPath = std::string(TILERT_SOURCE_DIR) + "/examples/gelu.tile";
const std::string kRowSumPath = std::string(TILERT_SOURCE_DIR) + "/examples/row_sum.tile";

// Loads `source` on the fake cuda device in a new context and launches its first kernel with
// every tensor 4 elements a side (the fake runs nothing; the launch and sync must succeed).
void load_and_launch(const std::string& source) {
  fake_count("");  // the fake driver first
  tilert_context context = nullptr;
  REQUIRE(tilert_context_create(&context) == TILERT_OK);
  tilert_device device = nullptr;
  tilert_status found = tilert_device_find(context, "cuda", &device);
  INFO(std::string(tilert_last_error()));
  REQUIRE(found == TILERT_OK);
  tilert_device_info info;
  REQUIRE(tilert_device_get_info(device, &info) == TILERT_OK);
  REQUIRE(std::string(info.name) == "Fake CUDA device");
  tilert_module module = nullptr;
  tilert_status loaded = tilert_module_load(context, device, source.data(), source.size(), &module);
  INFO(std::string(tilert_last_error()));
  REQUIRE(loaded == TILERT_OK);
  tilert_kernel kernel = nullptr;
  REQUIRE(tilert_kernel_get(module, tilert_module_kernel_name(module, 0), &kernel) == TILERT_OK);
  std::vector<tilert_arg> args;
  std::vector<tilert_buffer> buffers;
  const int64_t shape[2] = {4, 4};
  for (int32_t i = 0; i < tilert_kernel_param_count(kernel); ++i) {
    tilert_param_info p;
    REQUIRE(tilert_kernel_param_info(kernel, i, &p) == TILERT_OK);
    if (p.is_tensor) {
      tilert_buffer b = nullptr;
      REQUIRE(tilert_buffer_create(context, device, 16 * tilert_dtype_size(p.dtype), &b) == TILERT_OK);
      buffers.push_back(b);
      args.push_back(tilert_arg_tensor(b, p.dtype, p.rank, shape));
    } else {
      args.push_back(tilert_arg_int(4));
    }
  }
  tilert_stream stream = nullptr;
  REQUIRE(tilert_stream_create(context, device, &stream) == TILERT_OK);
  tilert_status launched = tilert_launch(kernel, stream, args.data(), args.size());
  INFO(std::string(tilert_last_error()));
  REQUIRE(launched == TILERT_OK);
  REQUIRE(tilert_stream_sync(stream) == TILERT_OK);
  tilert_stream_destroy(stream);
  for (tilert_buffer b : buffers) tilert_buffer_destroy(b);
  tilert_module_destroy(module);
  tilert_context_destroy(context);
}

// What the fake driver has done so far.
struct Counts {
  int compiled = fake_count("cuLinkAddData");
  int binaries = fake_count("load binary");
  int ptx = fake_count("load PTX");
  int launches = fake_count("cuLaunchKernel");
};

TEST_CASE("a second load takes the stored binary: nothing is compiled") {
  TempDir temp;
  ScopedEnv dir("TILERT_CACHE_DIR", temp.path());
  const std::string gelu = read_text(kGeluPath);
  Counts before;
  load_and_launch(gelu);
  Counts first;
  CHECK(first.compiled == before.compiled + 1);
  CHECK(first.binaries == before.binaries + 1);
  CHECK(first.ptx == before.ptx);
  CHECK(first.launches == before.launches + 1);
  const std::vector<std::string> entries = entries_in(temp.path() + "/cuda");
  REQUIRE(entries.size() == 1);
  const ino_t stored = inode_of(entries[0]);

  load_and_launch(gelu);
  Counts second;
  CHECK(second.compiled == first.compiled);  // neither emitted nor compiled
  CHECK(second.binaries == first.binaries + 1);
  CHECK(second.ptx == first.ptx);
  CHECK(inode_of(entries[0]) == stored);

  // Another module is another entry.
  load_and_launch(read_text(kRowSumPath));
  CHECK(fake_count("cuLinkAddData") == second.compiled + 1);
  CHECK(entries_in(temp.path() + "/cuda").size() == 2);
}

TEST_CASE(".tile text and the .tbc made from it share one entry") {
  TempDir temp;
  ScopedEnv dir("TILERT_CACHE_DIR", temp.path());
  const std::string gelu = read_text(kGeluPath);
  absl::StatusOr<Module> parsed = parse_tile(gelu, kGeluPath);
  REQUIRE(parsed.ok());
  const std::vector<uint8_t> tbc = write_bytecode(*parsed);
  load_and_launch(gelu);
  const int compiled = fake_count("cuLinkAddData");
  load_and_launch(std::string(tbc.begin(), tbc.end()));
  CHECK(fake_count("cuLinkAddData") == compiled);
  // Comments and spacing are not the module: still the same entry.
  load_and_launch("# another comment\n\n" + gelu);
  CHECK(fake_count("cuLinkAddData") == compiled);
  CHECK(entries_in(temp.path() + "/cuda").size() == 1);
}

TEST_CASE("a damaged entry is compiled again and replaced") {
  TempDir temp;
  ScopedEnv dir("TILERT_CACHE_DIR", temp.path());
  const std::string gelu = read_text(kGeluPath);
  load_and_launch(gelu);
  const std::string entry = entries_in(temp.path() + "/cuda").at(0);
  const auto size = fs::file_size(entry);
  for (uintmax_t cut : {uintmax_t{0}, uintmax_t{10}, size / 2, size - 1}) {
    CAPTURE(cut);
    fs::resize_file(entry, cut);
    const int compiled = fake_count("cuLinkAddData");
    load_and_launch(gelu);
    CHECK(fake_count("cuLinkAddData") == compiled + 1);
    CHECK(fs::file_size(entry) == size);
  }
  // Whole again: a hit.
  const int compiled = fake_count("cuLinkAddData");
  load_and_launch(gelu);
  CHECK(fake_count("cuLinkAddData") == compiled);
}

TEST_CASE("an entry the driver refuses is compiled again and replaced") {
  TempDir temp;
  ScopedEnv dir("TILERT_CACHE_DIR", temp.path());
  const std::string gelu = read_text(kGeluPath);
  load_and_launch(gelu);
  const std::string path = entries_in(temp.path() + "/cuda").at(0);
  const std::string good = read_text(path);
  // A well-formed entry for the same key whose binary the fake driver refuses.
  ModuleCacheKey key;
  std::memcpy(key.digest.data(), good.data() + 16, key.digest.size());
  ModuleCache cache(temp.path() + "/cuda");
  REQUIRE(cache.entry_path(key) == path);
  REQUIRE(cache.store(key, "\x7f" "ELF fake cubin\nrefuse").ok());
  REQUIRE(cache.lookup(key).has_value());
  const int compiled = fake_count("cuLinkAddData");
  load_and_launch(gelu);
  CHECK(fake_count("cuLinkAddData") == compiled + 1);
  CHECK(read_text(path) == good);
}

TEST_CASE("with the cache off or unwritable, the PTX is loaded as before") {
  TempDir temp;
  const std::string gelu = read_text(kGeluPath);
  {
    ScopedEnv dir("TILERT_CACHE_DIR", "off");
    Counts before;
    load_and_launch(gelu);
    CHECK(fake_count("load PTX") == before.ptx + 1);
    CHECK(fake_count("cuLinkAddData") == before.compiled);
  }
  {
    std::ofstream(temp.path() + "/a-file") << "not a directory";
    ScopedEnv dir("TILERT_CACHE_DIR", temp.path() + "/a-file/cache");
    Counts before;
    load_and_launch(gelu);
    CHECK(fake_count("load PTX") == before.ptx + 1);
    CHECK(fake_count("cuLinkAddData") == before.compiled);
  }
  CHECK(entries_in(temp.path()).size() == 1);  // a-file alone
}

}  // namespace
}  // namespace tilert::cuda
