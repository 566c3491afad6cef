// SPV_KHR_cooperative_matrix's opcodes and enumerants. The SPIR-V headers this project builds
// against (Debian 12's SPIRV-Headers 1.3.239) predate the extension, so its values are spelled
// here, as the extension's specification (SPIRV-Registry, SPV_KHR_cooperative_matrix, revision 7)
// and later SPIRV-Headers releases (spirv.hpp11 of 1.3.250 and newer) define them.
#pragma once

#include <cstdint>

#include <spirv/unified1/spirv.hpp11>

namespace tilert::spirv::cooperative_matrix {

inline constexpr spv::Op kOpTypeCooperativeMatrix = static_cast<spv::Op>(4456);
inline constexpr spv::Op kOpLoad = static_cast<spv::Op>(4457);
inline constexpr spv::Op kOpStore = static_cast<spv::Op>(4458);
inline constexpr spv::Op kOpMulAdd = static_cast<spv::Op>(4459);
inline constexpr spv::Op kOpLength = static_cast<spv::Op>(4460);

inline constexpr spv::Capability kCapability = static_cast<spv::Capability>(6022);
inline constexpr const char* kExtension = "SPV_KHR_cooperative_matrix";

// Cooperative Matrix Use
inline constexpr uint32_t kUseMatrixA = 0;
inline constexpr uint32_t kUseMatrixB = 1;
inline constexpr uint32_t kUseAccumulator = 2;

// Cooperative Matrix Layout
inline constexpr uint32_t kLayoutRowMajor = 0;
inline constexpr uint32_t kLayoutColumnMajor = 1;

// Cooperative Matrix Operands (a mask)
inline constexpr uint32_t kOperandsNone = 0;

}  // namespace tilert::spirv::cooperative_matrix
