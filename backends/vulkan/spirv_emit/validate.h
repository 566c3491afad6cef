// Validation of emitted modules with SPIRV-Tools before a pipeline is created. Only debug
// builds link SPIRV-Tools (meson defines TILERT_VALIDATE_SPIRV there); elsewhere this accepts
// every module, and the driver is the judge.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"

namespace tilert::vulkan {

// Internal "kernel NAME: emitted SPIR-V is invalid: <validator message>" for a module the
// validator rejects under the Vulkan environment matching `spirv_version` (1.5: Vulkan 1.2,
// 1.6: Vulkan 1.3).
absl::Status validate_emitted_spirv(std::string_view kernel_name, std::span<const uint32_t> words,
                                    uint32_t spirv_version);

// Whether this build validates (a debug build with SPIRV-Tools).
bool validates_emitted_spirv();

}  // namespace tilert::vulkan
