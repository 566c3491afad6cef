#include "backends/cpu/values.h"

#include <bit>
#include <cmath>

namespace tilert::cpu {

int64_t Value::as_int() const { return is_int ? i : truncate_to_int(f); }

bool Value::same_as(const Value& o) const {
  if (is_int != o.is_int) return false;
  if (is_int) return i == o.i;
  return std::bit_cast<uint64_t>(f) == std::bit_cast<uint64_t>(o.f) || (std::isnan(f) && std::isnan(o.f));
}

int64_t wrap_to(int64_t v, DType t) {
  switch (t) {
    case DType::kBool: return v != 0 ? 1 : 0;
    case DType::kI8: return static_cast<int8_t>(v);
    case DType::kU8: return static_cast<uint8_t>(v);
    case DType::kI32: return static_cast<int32_t>(v);
    case DType::kU32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

int64_t truncate_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

Value convert(Value v, DType t, bool round_floats) {
  if (t == DType::kBool) return Value::integer(v.truthy() ? 1 : 0);
  if (holds_int(t)) return Value::integer(wrap_to(v.as_int(), t));
  double d = v.as_double();
  return Value::real(round_floats ? round_to_dtype(d, t) : d);
}

}  // namespace tilert::cpu
