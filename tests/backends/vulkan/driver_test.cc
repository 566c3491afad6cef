// The dlopen'd Vulkan API: loading, the missing-library message, and entry points resolved.
#include <doctest/doctest.h>

#include <string>

#include "backends/vulkan/driver.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace tilert::vulkan {
namespace {

// Function pointers do not print; doctest compares what it can print.
template <typename Pfn>
bool resolved(Pfn entry) {
  return entry != nullptr;
}

TEST_CASE("a missing libvulkan is Unavailable, naming every library tried") {
  absl::StatusOr<std::shared_ptr<Driver>> driver =
      Driver::load({"libtilert-no-such-vulkan.so.1", "libtilert-no-such-vulkan.so"});
  REQUIRE_FALSE(driver.ok());
  CHECK(absl::IsUnavailable(driver.status()));
  CHECK(std::string(driver.status().message()) ==
        "unavailable: tried libtilert-no-such-vulkan.so.1, libtilert-no-such-vulkan.so");
}

TEST_CASE("the default library names are libvulkan.so.1 then libvulkan.so") {
  CHECK(default_library_names() == std::vector<std::string>{"libvulkan.so.1", "libvulkan.so"});
}

TEST_CASE("a library that is not a Vulkan loader is Unavailable, naming the missing entry") {
  // libdl / libc load fine but export no vkGetInstanceProcAddr.
  absl::StatusOr<std::shared_ptr<Driver>> driver = Driver::load({"libc.so.6"});
  REQUIRE_FALSE(driver.ok());
  CHECK(absl::IsUnavailable(driver.status()));
  CHECK(std::string(driver.status().message()) ==
        "unavailable: libc.so.6 does not export vkGetInstanceProcAddr");
}

TEST_CASE("libvulkan loads and resolves its global and instance entry points") {
  absl::StatusOr<std::shared_ptr<Driver>> driver = Driver::load();
  if (absl::IsUnavailable(driver.status())) {
    MESSAGE("skipped: no Vulkan driver: " << std::string(driver.status().message()));
    return;
  }
  REQUIRE_MESSAGE(driver.ok(), std::string(driver.status().message()));
  CHECK((*driver)->library_name() == "libvulkan.so.1");
  CHECK(resolved((*driver)->global().vkCreateInstance));
  CHECK(!resolved((*driver)->global().vkEnumeratePhysicalDevices));  // instance level: not yet
  absl::StatusOr<std::shared_ptr<Instance>> instance = Instance::create(*driver);
  REQUIRE_MESSAGE(instance.ok(), std::string(instance.status().message()));
  CHECK(resolved((*instance)->vk().vkEnumeratePhysicalDevices));
  CHECK(resolved((*instance)->vk().vkCreateDevice));
  CHECK(!resolved((*instance)->vk().vkQueueSubmit));  // device level: resolved per device
}

TEST_CASE("Vulkan results become statuses with the call's name") {
  CHECK(check(VK_SUCCESS, "vkCreateFence").ok());
  absl::Status oom = check(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory(64 bytes)");
  CHECK(absl::IsResourceExhausted(oom));
  CHECK(std::string(oom.message()) == "vkAllocateMemory(64 bytes): VK_ERROR_OUT_OF_DEVICE_MEMORY");
  CHECK(absl::IsUnavailable(check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit")));
  CHECK(std::string(check(static_cast<VkResult>(-12345), "x").message()) ==
        "x: VkResult(-12345)");
}

}  // namespace
}  // namespace tilert::vulkan
