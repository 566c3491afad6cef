// Kernel parameter values as the PTX entries the emitter writes declare them (README.md,
// "Parameters"): every parameter in an 8-byte slot, global arrays as their 64-bit address, scalars
// in the low bytes in the parameter's own type (bool as u32, f16 / bf16 as their bits).
#pragma once

#include <cstdint>

#include "ir/dtype.h"

namespace tilert::cuda {

struct ParamSlot {
  alignas(8) unsigned char bytes[8] = {};
};

// A scalar of `type`: integer types take `int_value`, float types `float_value`.
ParamSlot scalar_param(DType type, int64_t int_value, double float_value);
ParamSlot address_param(uint64_t address);

// An encoded tensor map (CUtensorMap), passed by value after the other parameters.
struct TensorMapSlot {
  alignas(64) unsigned char bytes[128] = {};
};

}  // namespace tilert::cuda
