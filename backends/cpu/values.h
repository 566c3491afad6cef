// Scalar values of the CPU reference: integers stay exact in int64 (wrapped to their dtype), floats
// are doubles (rounded to their dtype only at stores, and only in Precision::kExact).
#pragma once

#include <cstdint>

#include "ir/dtype.h"

namespace tilert::cpu {

struct Value {
  bool is_int = true;
  int64_t i = 0;
  double f = 0.0;

  static Value integer(int64_t v) {
    Value x;
    x.i = v;
    return x;
  }
  static Value real(double v) {
    Value x;
    x.is_int = false;
    x.f = v;
    return x;
  }
  double as_double() const { return is_int ? static_cast<double>(i) : f; }
  int64_t as_int() const;  // floats truncate toward zero (saturating; NaN reads as 0)
  bool truthy() const { return is_int ? i != 0 : f != 0.0; }
  // Same kind and same bits (NaN equals NaN): what "every thread computed the same" means.
  bool same_as(const Value& o) const;
};

// Integer and bool dtypes are held as int64; the others as double.
inline bool holds_int(DType t) { return t == DType::kBool || is_integer(t); }

// Wraps an integer to what `t` holds (two's complement, as C converts); bool becomes 0/1.
int64_t wrap_to(int64_t v, DType t);

// C's float-to-integer conversion (truncation), saturating instead of undefined.
int64_t truncate_to_int(double v);

// Converts `v` to dtype `t`: integer semantics for integer types; for float types, rounds to `t`
// when `round_floats` (Precision::kExact) and keeps the double otherwise.
Value convert(Value v, DType t, bool round_floats);

}  // namespace tilert::cpu
