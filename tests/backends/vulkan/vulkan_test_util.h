// Shared by the Vulkan runtime tests: the first Vulkan device (or why there is none) and SPIR-V
// assembled from text with SPIRV-Tools, the test-only oracle.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/vulkan/device.h"
#include "backends/vulkan/driver.h"

namespace tilert::vulkan::testing {

// The instance and its devices, created once per test process.
struct VulkanEnvironment {
  std::shared_ptr<Instance> instance;
  std::vector<PhysicalDeviceInfo> devices;
};

// The environment, or Unavailable when no libvulkan or no ICD is installed: the only reason a
// Vulkan test may skip. Any other failure is an error.
const absl::StatusOr<VulkanEnvironment>& vulkan_environment();

// A logical device on the first physical device; the error when vulkan_environment() has one.
absl::StatusOr<std::shared_ptr<Device>> first_device();

// Assembles SPIR-V assembly text for Vulkan 1.2 and validates it; REQUIREs both to succeed.
std::vector<uint32_t> assemble_spirv(const std::string& text);

}  // namespace tilert::vulkan::testing

// Ends the test with a printed reason when the machine has no Vulkan driver; fails it when the
// driver is present but broken.
#define VULKAN_DEVICE_OR_SKIP(device)                                                      \
  auto device##_or = ::tilert::vulkan::testing::first_device();                            \
  if (absl::IsUnavailable(device##_or.status())) {                                         \
    MESSAGE("skipped: no Vulkan driver: " << std::string(device##_or.status().message())); \
    return;                                                                                \
  }                                                                                        \
  REQUIRE_MESSAGE(device##_or.ok(), std::string(device##_or.status().message()));          \
  std::shared_ptr<::tilert::vulkan::Device> device = *device##_or
