// SPV_NV_cooperative_matrix2's and SPV_NV_tensor_addressing's opcodes and enumerants: matrices
// held by a whole workgroup (Workgroup scope; the driver stages them through shared memory it
// reserves) and loads and stores of them through tensor layouts, whose reads outside the
// tensor's dimensions are clamped and whose writes there are dropped. Debian 12's SPIRV-Headers
// (1.3.239) predate both extensions, so their values are spelled here as their specifications
// (SPIRV-Registry, NV/SPV_NV_cooperative_matrix2 and NV/SPV_NV_tensor_addressing) and later
// SPIRV-Headers releases define them. Both need SPIR-V 1.6.
#pragma once

#include <cstdint>

#include <spirv/unified1/spirv.hpp11>

namespace tilert::spirv::tensor_addressing {

inline constexpr const char* kMatrixExtension = "SPV_NV_cooperative_matrix2";
inline constexpr const char* kExtension = "SPV_NV_tensor_addressing";

inline constexpr spv::Op kOpLoadTensor = static_cast<spv::Op>(5367);
inline constexpr spv::Op kOpStoreTensor = static_cast<spv::Op>(5368);
inline constexpr spv::Op kOpTypeTensorLayout = static_cast<spv::Op>(5370);
inline constexpr spv::Op kOpCreateTensorLayout = static_cast<spv::Op>(5372);
inline constexpr spv::Op kOpTensorLayoutSetDimension = static_cast<spv::Op>(5373);
inline constexpr spv::Op kOpTensorLayoutSetStride = static_cast<spv::Op>(5374);
inline constexpr spv::Op kOpTensorLayoutSlice = static_cast<spv::Op>(5375);

inline constexpr spv::Capability kCapabilityMatrixTensorAddressing = static_cast<spv::Capability>(5433);
inline constexpr spv::Capability kCapabilityTensorAddressing = static_cast<spv::Capability>(5439);

// Tensor Clamp Mode: what a load reads outside the tensor's dimensions.
inline constexpr uint32_t kClampUndefined = 0;
inline constexpr uint32_t kClampConstant = 1;  // the layout's clamp value, 0 unless set

// Tensor Addressing Operands (a mask)
inline constexpr uint32_t kOperandsNone = 0;

}  // namespace tilert::spirv::tensor_addressing
