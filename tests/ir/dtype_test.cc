#include "ir/dtype.h"

#include <cmath>
#include <doctest/doctest.h>

namespace tilert {

TEST_CASE("dtype names round-trip and sizes match") {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    auto back = dtype_from_name(dtype_name(t));
    REQUIRE(back.has_value());
    CHECK(*back == t);
  }
  CHECK(dtype_size(DType::kBF16) == 2);
  CHECK(dtype_size(DType::kI64) == 8);
  CHECK_FALSE(dtype_from_name("f8").has_value());
}

TEST_CASE("f16 conversion rounds to nearest even and handles specials") {
  CHECK(f16_bits_to_f32(f32_to_f16_bits(1.0f)) == 1.0f);
  CHECK(f32_to_f16_bits(65504.0f) == 0x7bff);
  CHECK(f32_to_f16_bits(65520.0f) == 0x7c00);  // rounds up to infinity
  CHECK(f32_to_f16_bits(1.0f + 1.0f / 2048.0f) == 0x3c00);  // tie to even
  CHECK(f32_to_f16_bits(1.0f + 3.0f / 2048.0f) == 0x3c02);
  CHECK(f16_bits_to_f32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(f32_to_f16_bits(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(std::isnan(f16_bits_to_f32(f32_to_f16_bits(NAN))));
  // Every f16 value survives a round trip through f32.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    float f = f16_bits_to_f32(bits);
    if (std::isnan(f)) continue;
    CHECK(f32_to_f16_bits(f) == bits);
  }
}

TEST_CASE("bf16 conversion") {
  CHECK(bf16_bits_to_f32(f32_to_bf16_bits(1.5f)) == 1.5f);
  CHECK(f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // tie to even
  CHECK(f32_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
}

TEST_CASE("promotion") {
  CHECK(promote(DType::kF16, DType::kBF16) == DType::kF32);
  CHECK(promote(DType::kI32, DType::kF16) == DType::kF16);
  CHECK(promote(DType::kI32, DType::kI64) == DType::kI64);
  CHECK(promote(DType::kBool, DType::kBool) == DType::kI32);
  CHECK(round_to_dtype(300.0, DType::kU8) == 44.0);
  CHECK(round_to_dtype(-1.0, DType::kU32) == 4294967295.0);
}

}  // namespace tilert

namespace tilert {
TEST_CASE("rounding a double to f16 and bf16 rounds once, not twice") {
  // 1 + 2^-11 + 2^-40 lies just above the f16 tie between 1 and 1 + 2^-10: it must round up.
  // Through float first, the 2^-40 is lost and the tie rounds to even (down).
  double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(round_to_dtype(v, DType::kF16) == 1.0 + std::ldexp(1.0, -10));
  double w = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  CHECK(round_to_dtype(w, DType::kBF16) == 1.0 + std::ldexp(1.0, -7));
  CHECK(round_to_dtype(1.0 + std::ldexp(1.0, -11), DType::kF16) == 1.0);  // exact tie: to even
  CHECK(round_to_dtype(1e6, DType::kF16) == INFINITY);
}
}  // namespace tilert
