#include "ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tilert {
namespace {

// Sizes and kinds are inline in dtype.h.
constexpr std::string_view kNames[] = {
#define TILERT_X(e, name, size, kind) name,
    TILERT_DTYPES(TILERT_X)
#undef TILERT_X
};

int float_rank(DType t) {
  switch (t) {
    case DType::kF16:
    case DType::kBF16: return 1;
    case DType::kF32: return 2;
    case DType::kF64: return 3;
    default: return 0;
  }
}

}  // namespace

std::string_view dtype_name(DType t) { return kNames[static_cast<int>(t)]; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kNames[i] == name) return static_cast<DType>(i);
  return std::nullopt;
}

DType promote(DType a, DType b) {
  if (a == b) return a == DType::kBool ? DType::kI32 : a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == rb) return DType::kF32;  // f16 with bf16
    return ra > rb ? a : b;
  }
  if (a == DType::kBool) return b == DType::kBool ? DType::kI32 : promote(DType::kI32, b);
  if (b == DType::kBool) return promote(a, DType::kI32);
  // Integers: the wider wins; at equal width unsigned wins (as in C).
  if (dtype_size(a) != dtype_size(b)) {
    DType wide = dtype_size(a) > dtype_size(b) ? a : b;
    return dtype_size(wide) < 4 ? DType::kI32 : wide;
  }
  if (dtype_size(a) < 4) return DType::kI32;
  return dtype_kind(a) == DTypeKind::kUnsigned ? a : b;
}

uint16_t f32_to_f16_bits(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into inf: correct
  return static_cast<uint16_t>(sign | half);
}

float f16_bits_to_f32(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t man = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (man == 0) {
      out = sign;
    } else {
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      out = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (man << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t f32_to_bf16_bits(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  if (std::isnan(v)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bf16_bits_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

namespace {
template <typename T>
T wrap_integer(double v) {
  if (std::isnan(v)) return 0;
  // Integer math in the IR is done in int64 and wrapped; doubles reaching here are integral.
  double clamped = std::fmax(std::fmin(v, 9.2e18), -9.2e18);
  return static_cast<T>(static_cast<int64_t>(clamped));
}

// Narrows a double to float rounding to odd (truncate, then set the last bit if inexact). Rounding
// that float again to a 16-bit format gives the correctly rounded result of the double, which a
// plain double -> float -> half conversion (two round-to-nearest steps) does not always give.
float to_float_round_to_odd(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || std::isinf(f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t bits = std::bit_cast<uint32_t>(f) | 1u;
  return std::bit_cast<float>(bits);
}

}  // namespace

double round_to_dtype(double v, DType t) {
  switch (t) {
    case DType::kBool: return v != 0.0 ? 1.0 : 0.0;
    case DType::kI8: return wrap_integer<int8_t>(v);
    case DType::kU8: return wrap_integer<uint8_t>(v);
    case DType::kI32: return wrap_integer<int32_t>(v);
    case DType::kU32: return wrap_integer<uint32_t>(v);
    case DType::kI64: return static_cast<double>(wrap_integer<int64_t>(v));
    case DType::kF16: return f16_bits_to_f32(f32_to_f16_bits(to_float_round_to_odd(v)));
    case DType::kBF16: return bf16_bits_to_f32(f32_to_bf16_bits(to_float_round_to_odd(v)));
    case DType::kF32: return static_cast<float>(v);
    case DType::kF64: return v;
  }
  return v;
}

double load_element(const void* p, DType t) {
  switch (t) {
    case DType::kBool: return *static_cast<const uint8_t*>(p) != 0 ? 1.0 : 0.0;
    case DType::kI8: return *static_cast<const int8_t*>(p);
    case DType::kU8: return *static_cast<const uint8_t*>(p);
    case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kU32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kI64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::kF16: { uint16_t v; std::memcpy(&v, p, 2); return f16_bits_to_f32(v); }
    case DType::kBF16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_bits_to_f32(v); }
    case DType::kF32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::kF64: { double v; std::memcpy(&v, p, 8); return v; }
  }
  return 0.0;
}

void store_element(void* p, DType t, double v) {
  switch (t) {
    case DType::kBool: *static_cast<uint8_t*>(p) = v != 0.0; return;
    case DType::kI8: *static_cast<int8_t*>(p) = wrap_integer<int8_t>(v); return;
    case DType::kU8: *static_cast<uint8_t*>(p) = wrap_integer<uint8_t>(v); return;
    case DType::kI32: { int32_t x = wrap_integer<int32_t>(v); std::memcpy(p, &x, 4); return; }
    case DType::kU32: { uint32_t x = wrap_integer<uint32_t>(v); std::memcpy(p, &x, 4); return; }
    case DType::kI64: { int64_t x = wrap_integer<int64_t>(v); std::memcpy(p, &x, 8); return; }
    case DType::kF16: { uint16_t x = f32_to_f16_bits(static_cast<float>(v)); std::memcpy(p, &x, 2); return; }
    case DType::kBF16: { uint16_t x = f32_to_bf16_bits(static_cast<float>(v)); std::memcpy(p, &x, 2); return; }
    case DType::kF32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); return; }
    case DType::kF64: std::memcpy(p, &v, 8); return;
  }
}

Tolerance tolerance_for(DType t, int64_t depth) {
  double growth = std::sqrt(static_cast<double>(depth < 1 ? 1 : depth));
  switch (t) {
    case DType::kF16: return {2e-3 * (1 + 0.25 * growth), 1e-3 * growth};
    case DType::kBF16: return {1.6e-2 * (1 + 0.25 * growth), 8e-3 * growth};
    case DType::kF32: return {1e-5 * growth, 1e-6 * growth};
    case DType::kF64: return {1e-12 * growth, 1e-13 * growth};
    default: return {0.0, 0.0};
  }
}

}  // namespace tilert
