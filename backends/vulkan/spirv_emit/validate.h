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
// 1.6: Vulkan 1.3). A module declaring the CooperativeMatrixKHR (BFloat16TypeKHR,
// TensorAddressingNV) capability or the SPV_NV_cooperative_matrix2 extension is accepted
// unvalidated when the linked SPIRV-Tools predates SPV_KHR_cooperative_matrix (SPV_KHR_bfloat16,
// SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix2) — Debian 12's 2023.1 predates all four —
// as it would reject every such module.
absl::Status validate_emitted_spirv(std::string_view kernel_name, std::span<const uint32_t> words,
                                    uint32_t spirv_version);

// Whether this build validates (a debug build with SPIRV-Tools).
bool validates_emitted_spirv();

// Whether this build validates modules that use SPV_KHR_cooperative_matrix (its SPIRV-Tools is
// 2023.3 or newer).
bool validates_cooperative_matrix();

// Whether this build validates modules that use SPV_KHR_bfloat16.
bool validates_bfloat16();

// Whether this build validates modules that use SPV_NV_cooperative_matrix2 (workgroup-scope
// matrices), and SPV_NV_tensor_addressing.
bool validates_workgroup_matrices();
bool validates_tensor_addressing();

}  // namespace tilert::vulkan
