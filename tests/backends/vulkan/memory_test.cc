// Buffers: zero-filled on creation, upload / download through mapping and through staging.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "backends/vulkan/memory.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace tilert::vulkan {
namespace {

void round_trip(std::shared_ptr<Device> device, bool force_staging) {
  constexpr size_t kBytes = 4096;
  auto buffer = Buffer::create(device, kBytes, force_staging);
  REQUIRE_MESSAGE(buffer.ok(), std::string(buffer.status().message()));
  CHECK((*buffer)->size() == kBytes);
  CHECK((*buffer)->host_visible() == !force_staging);  // lavapipe memory is host-visible

  std::vector<uint8_t> back(kBytes, 0xAB);
  REQUIRE((*buffer)->download(0, back.data(), kBytes).ok());
  CHECK(back == std::vector<uint8_t>(kBytes, 0));  // new buffers read as zero

  std::vector<uint8_t> data(kBytes);
  std::iota(data.begin(), data.end(), uint8_t{7});
  REQUIRE((*buffer)->upload(0, data.data(), kBytes).ok());
  std::vector<uint8_t> patch = {1, 2, 3};
  REQUIRE((*buffer)->upload(100, patch.data(), patch.size()).ok());
  data[100] = 1, data[101] = 2, data[102] = 3;
  REQUIRE((*buffer)->download(0, back.data(), kBytes).ok());
  CHECK(back == data);
  std::vector<uint8_t> middle(10);
  REQUIRE((*buffer)->download(98, middle.data(), middle.size()).ok());
  CHECK(std::vector<uint8_t>(data.begin() + 98, data.begin() + 108) == middle);

  absl::Status outside = (*buffer)->upload(kBytes - 2, patch.data(), patch.size());
  CHECK(absl::IsInvalidArgument(outside));
  CHECK(std::string(outside.message()) ==
        "upload of 3 bytes at offset 4094 exceeds the buffer's 4096 bytes");
}

TEST_CASE("buffers round-trip through mapped memory") {
  VULKAN_DEVICE_OR_SKIP(device);
  round_trip(device, false);
}

TEST_CASE("buffers round-trip through a staging buffer and queue copies") {
  VULKAN_DEVICE_OR_SKIP(device);
  round_trip(device, true);
}

TEST_CASE("an empty buffer is allowed") {
  VULKAN_DEVICE_OR_SKIP(device);
  auto buffer = Buffer::create(device, 0);
  REQUIRE_MESSAGE(buffer.ok(), std::string(buffer.status().message()));
  CHECK((*buffer)->upload(0, nullptr, 0).ok());
  CHECK(absl::IsInvalidArgument((*buffer)->download(0, nullptr, 1)));
}

}  // namespace
}  // namespace tilert::vulkan
