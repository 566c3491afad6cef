#include "backends/cuda/kernel_params.h"

#include <cstring>

namespace tilert::cuda {

ParamSlot scalar_param(DType type, int64_t i, double f) {
  ParamSlot slot;
  auto put = [&](const auto& v) { std::memcpy(slot.bytes, &v, sizeof v); };
  switch (type) {
    case DType::kI8: case DType::kI32: put(static_cast<int32_t>(i)); break;
    case DType::kBool: put(static_cast<uint32_t>(i != 0)); break;
    case DType::kU8: case DType::kU32: put(static_cast<uint32_t>(i)); break;
    case DType::kI64: put(i); break;
    case DType::kF16: put(f32_to_f16_bits(static_cast<float>(f))); break;
    case DType::kBF16: put(f32_to_bf16_bits(static_cast<float>(f))); break;
    case DType::kF32: put(static_cast<float>(f)); break;
    case DType::kF64: put(f); break;
  }
  return slot;
}

ParamSlot address_param(uint64_t address) {
  ParamSlot slot;
  std::memcpy(slot.bytes, &address, sizeof address);
  return slot;
}

}  // namespace tilert::cuda
