// Types, constants and conversions of the AMDGCN emitter. Conversions follow C: integer widening
// by the source's signedness, truncation wraps, float to integer truncates toward zero, anything
// to bool compares with zero. bf16 has no LLVM type every supported LLVM version lowers for
// amdgcn, so it travels as its 16 bits in an i16 and converts through f32 (round to nearest even).
#include <bit>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/hip/emitter.h"
#include "ir/status.h"

namespace tilert::hip {

std::string_view value_type(DType t) {
  switch (t) {
    case DType::kBool: return "i1";
    case DType::kI8: case DType::kU8: return "i8";
    case DType::kI32: case DType::kU32: return "i32";
    case DType::kI64: return "i64";
    case DType::kF16: return "half";
    case DType::kBF16: return "i16";
    case DType::kF32: return "float";
    case DType::kF64: return "double";
  }
  return "void";
}

std::string_view memory_type(DType t) { return t == DType::kBool ? "i8" : value_type(t); }

int memory_align(DType t) { return dtype_size(t); }

std::string Emitter::fresh() { return absl::StrCat("%t", next_temp_++); }

std::string Emitter::op(std::string_view text) {
  std::string result = fresh();
  absl::StrAppend(&body_, "  ", result, " = ", av(text), "\n");
  return result;
}

void Emitter::line(std::string_view text) { absl::StrAppend(&body_, "  ", av(text), "\n"); }

void Emitter::declare(std::string_view declaration) { declarations_.emplace(declaration); }

std::string Emitter::declarations() const {
  std::string out;
  for (const std::string& d : declarations_) absl::StrAppend(&out, d, "\n");
  return out;
}

std::string Emitter::float_literal(double v, DType t) const {
  switch (t) {
    case DType::kF16: return absl::StrFormat("0xH%04X", f32_to_f16_bits(static_cast<float>(v)));
    case DType::kBF16: return absl::StrCat(static_cast<int16_t>(f32_to_bf16_bits(static_cast<float>(v))));
    case DType::kF32:
      // LLVM spells a float constant as the double of the same value, in hex to be exact.
      return absl::StrFormat("0x%016X", std::bit_cast<uint64_t>(static_cast<double>(static_cast<float>(v))));
    default: return absl::StrFormat("0x%016X", std::bit_cast<uint64_t>(v));
  }
}

std::string Emitter::constant(const simt::Expr& e) const {
  if (is_float(e.type)) return float_literal(e.float_value, e.type);
  switch (e.type) {
    case DType::kBool: return e.int_value ? "true" : "false";
    case DType::kI8: case DType::kU8: return absl::StrCat(static_cast<int8_t>(e.int_value));
    case DType::kI32: case DType::kU32: return absl::StrCat(static_cast<int32_t>(e.int_value));
    default: return absl::StrCat(e.int_value);
  }
}

std::string Emitter::bf16_to_f32(const std::string& bits) {
  std::string wide = op(absl::StrCat("zext i16 ", bits, " to i32"));
  std::string high = op(absl::StrCat("shl i32 ", wide, ", 16"));
  return op(absl::StrCat("bitcast i32 ", high, " to float"));
}

std::string Emitter::f32_to_bf16(const std::string& value) {
  // Round to nearest even: add 0x7fff plus the lowest kept bit, keep the high half. NaNs keep
  // their sign and become the quiet NaN so rounding cannot turn them into infinities.
  std::string bits = op(absl::StrCat("bitcast float ", value, " to i32"));
  std::string kept = op(absl::StrCat("lshr i32 ", bits, ", 16"));
  std::string lowest = op(absl::StrCat("and i32 ", kept, ", 1"));
  std::string bias = op(absl::StrCat("add i32 ", lowest, ", 32767"));
  std::string rounded = op(absl::StrCat("add i32 ", bits, ", ", bias));
  std::string rounded_high = op(absl::StrCat("lshr i32 ", rounded, ", 16"));
  std::string quiet = op(absl::StrCat("or i32 ", kept, ", 64"));
  std::string is_nan = op(absl::StrCat("fcmp uno float ", value, ", 0.0"));
  std::string chosen = op(absl::StrCat("select i1 ", is_nan, ", i32 ", quiet, ", i32 ", rounded_high));
  return op(absl::StrCat("trunc i32 ", chosen, " to i16"));
}

std::string Emitter::from_memory(const std::string& value, DType t) {
  if (t != DType::kBool) return value;
  return op(absl::StrCat("icmp ne i8 ", value, ", 0"));
}

std::string Emitter::to_memory(const std::string& value, DType t) {
  if (t != DType::kBool) return value;
  return op(absl::StrCat("zext i1 ", value, " to i8"));
}

std::string Emitter::cast(const std::string& value, DType from, DType to) {
  if (from == to) return value;
  if (from == DType::kBF16) return cast(bf16_to_f32(value), DType::kF32, to);
  if (to == DType::kBF16) return f32_to_bf16(cast(value, from, DType::kF32));
  std::string src(value_type(from)), dst(value_type(to));
  int from_bits = from == DType::kBool ? 1 : dtype_size(from) * 8;
  int to_bits = to == DType::kBool ? 1 : dtype_size(to) * 8;
  if (to == DType::kBool) {
    if (is_float(from)) return op(absl::StrCat("fcmp une ", src, " ", value, ", 0.0"));
    return op(absl::StrCat("icmp ne ", src, " ", value, ", 0"));
  }
  bool from_signed = dtype_kind(from) == DTypeKind::kSigned;
  bool to_signed = dtype_kind(to) == DTypeKind::kSigned;
  if (is_float(from) && is_float(to)) {
    return op(absl::StrCat(from_bits < to_bits ? "fpext " : "fptrunc ", src, " ", value, " to ", dst));
  }
  if (is_float(from)) {
    return op(absl::StrCat(to_signed ? "fptosi " : "fptoui ", src, " ", value, " to ", dst));
  }
  if (is_float(to)) {
    return op(absl::StrCat(from_signed ? "sitofp " : "uitofp ", src, " ", value, " to ", dst));
  }
  if (from_bits == to_bits) return value;  // i32 <-> u32, i8 <-> u8: the same bits
  if (from_bits > to_bits) return op(absl::StrCat("trunc ", src, " ", value, " to ", dst));
  return op(absl::StrCat(from_signed ? "sext " : "zext ", src, " ", value, " to ", dst));
}

}  // namespace tilert::hip
