// The cuda row of the runtime's backend registry: every hook present, and without a driver the
// reason enumerate gives is the driver layer's clear message.
#include <doctest/doctest.h>

#include <string>

#include "runtime/backend.h"

namespace tilert::runtime {
namespace {

const Backend* cuda_backend() {
  for (const Backend* b : backend_registry())
    if (std::string(b->name) == "cuda") return b;
  return nullptr;
}

TEST_CASE("the cuda row has every hook") {
  const Backend* cuda = cuda_backend();
  REQUIRE(cuda != nullptr);
  CHECK(cuda->kind == TILERT_DEVICE_CUDA);
  CHECK(missing_hooks(*cuda) == "");
}

TEST_CASE("cuda devices, or why there are none") {
  const Backend* cuda = cuda_backend();
  REQUIRE(cuda != nullptr);
  absl::StatusOr<std::vector<DeviceRecord>> devices = cuda->enumerate();
  if (!devices.ok()) {
    MESSAGE("no cuda device: ", devices.status().ToString());
    CHECK(devices.status().code() == absl::StatusCode::kUnavailable);
    bool clear = devices.status().message().find("libcuda.so.1 not found: no NVIDIA driver") !=
                     std::string::npos ||
                 devices.status().message().find("NVIDIA") != std::string::npos ||
                 devices.status().message().find("CUDA") != std::string::npos;
    CHECK(clear);
    return;
  }
  for (const DeviceRecord& d : *devices) {
    MESSAGE("cuda:", d.index, " ", d.name, " (", d.driver, ") ", d.features);
    CHECK_FALSE(d.name.empty());
    CHECK(d.shared_memory_limit > 48 * 1024);
    CHECK((d.capabilities & capability_bit(Capability::kF16)) != 0);
    CHECK((d.capabilities & capability_bit(Capability::kMbarrier)) != 0);
    CHECK((d.capabilities & capability_bit(Capability::kCluster)) == 0);
  }
}

}  // namespace
}  // namespace tilert::runtime
