// The compiled-module cache through the public C API on a real GPU: the first load of a module
// stores one entry, a load in a new context takes it (the file is left as it was), a damaged
// entry is compiled again and replaced, and TILERT_CACHE_DIR=off stores nothing; every load's
// kernel computes the host's results. Without a CUDA device every test prints why and skips.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache_test_util.h"
#include "tilert/tilert.h"

namespace tilert::cuda {
namespace {

using testing::ScopedEnv;
using testing::TempDir;
using testing::entries_in;
using testing::inode_of;
namespace fs = std::filesystem;

// Y = 2 X + 1 over 128-element tiles (exact in f32 for the inputs used).
constexpr const char* kAffine = R"(kernel affine(X: f32[N], Y: f32[N], N: i32 = 1000)
    grid(ceildiv(N, 128)) threads(128) {
  fragment x: f32[128]
  copy X[bx * 128 +: 128] -> x
  parallel i in 0 .. 128 {
    x[i] = x[i] * 2.0 + 1.0
  }
  copy x -> Y[bx * 128 +: 128]
}
)";

// A context with its cuda device, or none (the reason printed) where there is none.
struct CudaContext {
  tilert_context context = nullptr;
  tilert_device device = nullptr;
  CudaContext() {
    REQUIRE(tilert_context_create(&context) == TILERT_OK);
    if (tilert_device_find(context, "cuda", &device) != TILERT_OK) {
      MESSAGE("skipped: no cuda device: ", std::string(tilert_last_error()));
      device = nullptr;
    }
  }
  ~CudaContext() { tilert_context_destroy(context); }
};

// Loads kAffine in a new context and runs it over a ragged 300 elements; checks the results.
// False when there is no CUDA device.
bool load_and_run_affine() {
  CudaContext cuda;
  if (cuda.device == nullptr) return false;
  tilert_module module = nullptr;
  tilert_status loaded =
      tilert_module_load(cuda.context, cuda.device, kAffine, std::strlen(kAffine), &module);
  INFO(std::string(tilert_last_error()));
  REQUIRE(loaded == TILERT_OK);
  tilert_kernel kernel = nullptr;
  REQUIRE(tilert_kernel_get(module, "affine", &kernel) == TILERT_OK);
  const int64_t n = 300, shape[1] = {n};
  std::vector<float> x(n), y(n, -7.0f);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i - 150) / 8;
  tilert_buffer bx = nullptr, by = nullptr;
  REQUIRE(tilert_buffer_create(cuda.context, cuda.device, n * 4, &bx) == TILERT_OK);
  REQUIRE(tilert_buffer_create(cuda.context, cuda.device, n * 4, &by) == TILERT_OK);
  REQUIRE(tilert_buffer_upload(bx, 0, x.data(), n * 4) == TILERT_OK);
  tilert_stream stream = nullptr;
  REQUIRE(tilert_stream_create(cuda.context, cuda.device, &stream) == TILERT_OK);
  tilert_arg args[] = {tilert_arg_tensor(bx, TILERT_F32, 1, shape),
                       tilert_arg_tensor(by, TILERT_F32, 1, shape), tilert_arg_int(n)};
  REQUIRE(tilert_launch(kernel, stream, args, 3) == TILERT_OK);
  tilert_status synced = tilert_stream_sync(stream);
  INFO(std::string(tilert_last_error()));
  REQUIRE(synced == TILERT_OK);
  REQUIRE(tilert_buffer_download(by, 0, y.data(), n * 4) == TILERT_OK);
  int wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += y[i] != 2 * x[i] + 1;
  CHECK(wrong == 0);
  tilert_stream_destroy(stream);
  tilert_buffer_destroy(bx);
  tilert_buffer_destroy(by);
  tilert_module_destroy(module);
  return true;
}

TEST_CASE("a module loaded again takes its binary from the cache; a damaged entry is replaced") {
  TempDir temp;
  ScopedEnv dir("TILERT_CACHE_DIR", temp.path());
  const std::string cuda_dir = temp.path() + "/cuda";
  if (!load_and_run_affine()) return;
  std::vector<std::string> entries = entries_in(cuda_dir);
  REQUIRE(entries.size() == 1);
  const std::string entry = entries.front();
  CHECK(entry.ends_with(".cubin"));
  const ino_t stored = inode_of(entry);
  const auto size = fs::file_size(entry);
  MESSAGE("entry ", entry, ": ", size, " bytes");

  // A hit reads the entry and leaves it alone (a miss would rename a new file over it).
  REQUIRE(load_and_run_affine());
  CHECK(entries_in(cuda_dir).size() == 1);
  CHECK(inode_of(entry) == stored);

  // Cut in half: a miss, compiled again and stored whole.
  fs::resize_file(entry, size / 2);
  REQUIRE(load_and_run_affine());
  CHECK(fs::file_size(entry) == size);
  CHECK(inode_of(entry) != stored);
  CHECK(entries_in(cuda_dir).size() == 1);
}

TEST_CASE("TILERT_CACHE_DIR=off loads without storing anything") {
  TempDir temp;
  ScopedEnv home("HOME", temp.path());
  ScopedEnv xdg("XDG_CACHE_HOME", temp.path() + "/xdg");
  ScopedEnv dir("TILERT_CACHE_DIR", "off");
  if (!load_and_run_affine()) return;
  CHECK(entries_in(temp.path()).empty());
}

TEST_CASE("an unwritable cache directory does not stop a load") {
  TempDir temp;
  std::ofstream(temp.path() + "/a-file") << "not a directory";
  ScopedEnv dir("TILERT_CACHE_DIR", temp.path() + "/a-file");
  if (!load_and_run_affine()) return;
  CHECK(entries_in(temp.path()).size() == 1);
}

}  // namespace
}  // namespace tilert::cuda
