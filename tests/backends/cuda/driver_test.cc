// The CUDA driver layer without a GPU: libcuda missing or unusable gives a clear Unavailable
// error, never a crash; the sync time limit reads TILERT_SYNC_TIMEOUT_MS.
#include <doctest/doctest.h>

#include <cstdlib>

#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"

namespace tilert::cuda {
namespace {

TEST_CASE("a missing driver library is Unavailable, naming what was tried") {
  absl::StatusOr<std::shared_ptr<Driver>> driver =
      Driver::load({"libtilert_missing_cuda.so.1", "libtilert_missing_cuda.so"});
  REQUIRE_FALSE(driver.ok());
  CHECK(driver.status().code() == absl::StatusCode::kUnavailable);
  CHECK(driver.status().message() ==
        "libtilert_missing_cuda.so.1 not found: no NVIDIA driver (tried libtilert_missing_cuda.so.1, "
        "libtilert_missing_cuda.so)");
}

TEST_CASE("the default library names start with libcuda.so.1") {
  CHECK(default_library_names().front() == "libcuda.so.1");
  absl::StatusOr<std::shared_ptr<Driver>> driver = Driver::load();
  if (driver.ok()) {
    MESSAGE("libcuda loaded: driver version ", (*driver)->version());
    CHECK((*driver)->version() >= 12000);
  } else {
    MESSAGE("no usable libcuda here: ", driver.status().ToString());
    CHECK(driver.status().code() == absl::StatusCode::kUnavailable);
    CHECK_FALSE(driver.status().message().empty());
  }
}

TEST_CASE("a library that is not a CUDA driver is Unavailable") {
  absl::StatusOr<std::shared_ptr<Driver>> driver = Driver::load({"libm.so.6"});
  REQUIRE_FALSE(driver.ok());
  CHECK(driver.status().code() == absl::StatusCode::kUnavailable);
  CHECK(driver.status().message() ==
        "libm.so.6 has no cuGetProcAddress: the NVIDIA driver is older than CUDA 12");
}

TEST_CASE("the sync time limit comes from TILERT_SYNC_TIMEOUT_MS") {
  unsetenv("TILERT_SYNC_TIMEOUT_MS");
  CHECK(sync_timeout_ms() == 10000);
  setenv("TILERT_SYNC_TIMEOUT_MS", "250", 1);
  CHECK(sync_timeout_ms() == 250);
  setenv("TILERT_SYNC_TIMEOUT_MS", "soon", 1);
  CHECK(sync_timeout_ms() == 10000);
  setenv("TILERT_SYNC_TIMEOUT_MS", "-5", 1);
  CHECK(sync_timeout_ms() == 10000);
  unsetenv("TILERT_SYNC_TIMEOUT_MS");
}

}  // namespace
}  // namespace tilert::cuda
