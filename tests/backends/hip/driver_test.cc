// The HIP runtime loader without ROCm, and the pieces of it that need no GPU: architecture names
// from the kernel driver's topology, kernel-argument packing and the sync time limit.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "backends/hip/driver.h"
#include "backends/hip/kfd_topology.h"

namespace tilert::hip {
namespace {

TEST_CASE("without ROCm the loader says which libraries it tried") {
  absl::StatusOr<std::shared_ptr<Driver>> driver = Driver::load();
  if (driver.ok()) {
    MESSAGE("skipped: ROCm is installed (", (*driver)->library_name(), ")");
    return;
  }
  CHECK(driver.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(driver.status().message()) ==
        "libamdhip64.so not found: ROCm is not installed (tried libamdhip64.so.6, "
        "libamdhip64.so.5, libamdhip64.so)");
}

TEST_CASE("architecture names from gfx_target_version") {
  CHECK(arch_from_target_version(90010) == "gfx90a");
  CHECK(arch_from_target_version(90400) == "gfx940");
  CHECK(arch_from_target_version(110000) == "gfx1100");
  CHECK(arch_from_target_version(90008) == "gfx908");
  CHECK(arch_from_target_version(0) == "");
}

TEST_CASE("GPU nodes of a topology, in node order, CPU nodes skipped") {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("tilert_kfd_" + std::to_string(::getpid()));
  auto node = [&](const char* name, const char* properties) {
    fs::create_directories(root / name);
    std::ofstream(root / name / "properties") << properties;
  };
  node("0", "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n");
  node("2", "simd_count 440\ngfx_target_version 110000\n");
  node("1", "simd_count 440\ngfx_target_version 90010\nmax_waves_per_simd 8\n");
  node("10", "simd_count 440\ngfx_target_version 90400\n");
  absl::StatusOr<std::vector<std::string>> archs = gpu_archs(root.string());
  REQUIRE(archs.ok());
  CHECK(*archs == std::vector<std::string>{"gfx90a", "gfx1100", "gfx940"});
  fs::remove_all(root);
  CHECK(gpu_archs(root.string()).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("kernel arguments at their natural alignment, padded to the segment size") {
  KernargBuilder args;
  uint8_t flag = 1;
  uint64_t pointer = 0x1122334455667788ull;
  float scale = 2.5f;
  uint16_t half = 0x3c00;
  args.add(&flag, 1);
  args.add(&pointer, 8);  // at 8
  args.add(&scale, 4);    // at 16
  args.add(&half, 2);     // at 20
  std::vector<uint8_t> bytes = args.finish(32);
  REQUIRE(bytes.size() == 32);
  uint64_t read_pointer = 0;
  std::memcpy(&read_pointer, bytes.data() + 8, 8);
  CHECK(bytes[0] == 1);
  CHECK(read_pointer == pointer);
  float read_scale = 0;
  std::memcpy(&read_scale, bytes.data() + 16, 4);
  CHECK(read_scale == 2.5f);
  CHECK(bytes[20] == 0x00);
  CHECK(bytes[21] == 0x3c);
}

TEST_CASE("the sync time limit comes from TILERT_SYNC_TIMEOUT_MS") {
  unsetenv("TILERT_SYNC_TIMEOUT_MS");
  CHECK(sync_timeout().count() == 10000);
  setenv("TILERT_SYNC_TIMEOUT_MS", "250", 1);
  CHECK(sync_timeout().count() == 250);
  setenv("TILERT_SYNC_TIMEOUT_MS", "soon", 1);
  CHECK(sync_timeout().count() == 10000);
  unsetenv("TILERT_SYNC_TIMEOUT_MS");
}

}  // namespace
}  // namespace tilert::hip
