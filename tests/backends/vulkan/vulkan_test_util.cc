#include "tests/backends/vulkan/vulkan_test_util.h"

#include <spirv-tools/libspirv.hpp>

#include "ir/status.h"

namespace tilert::vulkan::testing {

namespace {

absl::StatusOr<VulkanEnvironment> create_environment() {
  ASSIGN_OR_RETURN(std::shared_ptr<Driver> driver, Driver::load());
  ASSIGN_OR_RETURN(std::shared_ptr<Instance> instance, Instance::create(driver));
  ASSIGN_OR_RETURN(std::vector<PhysicalDeviceInfo> devices, instance->physical_devices());
  if (devices.empty()) return absl::UnavailableError("no Vulkan device (no ICD installed?)");
  return VulkanEnvironment{std::move(instance), std::move(devices)};
}

}  // namespace

const absl::StatusOr<VulkanEnvironment>& vulkan_environment() {
  static const auto* environment = new absl::StatusOr<VulkanEnvironment>(create_environment());
  return *environment;
}

absl::StatusOr<std::shared_ptr<Device>> first_device() {
  const absl::StatusOr<VulkanEnvironment>& environment = vulkan_environment();
  if (!environment.ok()) return environment.status();
  return Device::create(environment->instance, environment->devices.front());
}

std::vector<uint32_t> assemble_spirv(const std::string& text) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string diagnostics;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& position,
                               const char* message) {
    diagnostics += "line " + std::to_string(position.line) + ": " + message + "\n";
  });
  std::vector<uint32_t> words;
  REQUIRE_MESSAGE(tools.Assemble(text, &words), diagnostics);
  REQUIRE_MESSAGE(tools.Validate(words), diagnostics);
  return words;
}

}  // namespace tilert::vulkan::testing
