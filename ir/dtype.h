// Element types of tilert tensors, tiles and scalars.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tilert {

// X(enumerator, text name, size in bytes, kind) — the one list every layer reads: the text
// format's spelling, the bytecode's code (the enumerator's value), and the runtime's sizes.
#define TILERT_DTYPES(X)        \
  X(kBool, "bool", 1, kBool)    \
  X(kI8, "i8", 1, kSigned)      \
  X(kU8, "u8", 1, kUnsigned)    \
  X(kI32, "i32", 4, kSigned)    \
  X(kU32, "u32", 4, kUnsigned)  \
  X(kI64, "i64", 8, kSigned)    \
  X(kF16, "f16", 2, kFloat)     \
  X(kBF16, "bf16", 2, kFloat)   \
  X(kF32, "f32", 4, kFloat)     \
  X(kF64, "f64", 8, kFloat)

enum class DType : uint8_t {
#define TILERT_X(e, name, size, kind) e,
  TILERT_DTYPES(TILERT_X)
#undef TILERT_X
};
inline constexpr int kNumDTypes = 0
#define TILERT_X(e, name, size, kind) +1
    TILERT_DTYPES(TILERT_X)
#undef TILERT_X
    ;

enum class DTypeKind : uint8_t { kBool, kSigned, kUnsigned, kFloat };

std::string_view dtype_name(DType t);
// Size and kind are asked of nearly every expression node by the lowering and the emitters: inline.
constexpr int dtype_size(DType t) {
  switch (t) {
#define TILERT_X(e, name, size, kind) case DType::e: return size;
    TILERT_DTYPES(TILERT_X)
#undef TILERT_X
  }
  return 0;
}
constexpr DTypeKind dtype_kind(DType t) {
  switch (t) {
#define TILERT_X(e, name, size, kind) case DType::e: return DTypeKind::kind;
    TILERT_DTYPES(TILERT_X)
#undef TILERT_X
  }
  return DTypeKind::kBool;
}
std::optional<DType> dtype_from_name(std::string_view name);
inline bool is_float(DType t) { return dtype_kind(t) == DTypeKind::kFloat; }
inline bool is_integer(DType t) {
  return dtype_kind(t) == DTypeKind::kSigned || dtype_kind(t) == DTypeKind::kUnsigned;
}

// The type of `a op b` for arithmetic: floats beat integers, wider beats narrower, f16 with bf16 is
// f32, bool promotes to i32.
DType promote(DType a, DType b);

// Rounds a value to what `t` can represent (round-to-nearest-even for floats, wrap-around for
// integers, 0/1 for bool). The CPU reference applies this at every store.
double round_to_dtype(double v, DType t);

// Bit conversions for 16-bit floats (round-to-nearest-even).
uint16_t f32_to_f16_bits(float v);
float f16_bits_to_f32(uint16_t bits);
uint16_t f32_to_bf16_bits(float v);
float bf16_bits_to_f32(uint16_t bits);

// Reads / writes one element of type `t` at `p` as a double (integers exactly up to 2^53).
double load_element(const void* p, DType t);
void store_element(void* p, DType t, double v);

// Relative / absolute tolerance for comparing a result of type `t` with a float64 reference
// after a reduction of length about `depth`.
struct Tolerance {
  double rel;
  double abs;
};
Tolerance tolerance_for(DType t, int64_t depth = 1);

}  // namespace tilert
