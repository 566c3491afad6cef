// SPV_KHR_bfloat16's enumerants. Debian 12's SPIRV-Headers (1.3.239) predate the extension, so
// its values are spelled here as its specification (SPIRV-Registry, SPV_KHR_bfloat16) and
// later SPIRV-Headers releases define them. A bf16 type is OpTypeFloat 16 with the floating-point
// encoding operand BFloat16KHR; OpTypeFloat 16 alone stays IEEE binary16.
#pragma once

#include <cstdint>

#include <spirv/unified1/spirv.hpp11>

namespace tilert::spirv::bfloat16 {

inline constexpr const char* kExtension = "SPV_KHR_bfloat16";
inline constexpr spv::Capability kCapabilityType = static_cast<spv::Capability>(5116);
inline constexpr spv::Capability kCapabilityCooperativeMatrix = static_cast<spv::Capability>(5118);
// FP Encoding
inline constexpr uint32_t kEncodingBFloat16 = 0;

}  // namespace tilert::spirv::bfloat16
