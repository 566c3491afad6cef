// Integer division and remainder by a constant, written as shifts and a high multiply.
//
// ptxas compiles `div.s32` / `rem.s32` as a full software division (a float reciprocal and a
// correction, ~20 instructions) even when the divisor is an immediate: it leaves strength
// reduction to the compiler that wrote the PTX. Lowered index arithmetic divides by tile
// extents and stage counts inside every pipelined loop, so this is where it is done.
//
// Semantics are C's (the tile language's): the quotient truncates toward zero and the remainder
// takes the dividend's sign. Where the dividend is known non-negative (thread and block indices,
// non-negative constants, sums and products of such) a shift or mask, or a high multiply and a
// shift, is the whole answer; otherwise the signed forms below add a sign correction.
#include <bit>

#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_function.h"
#include "ir/expr.h"

namespace tilert::cuda {

using simt::Expr;
using simt::ExprKind;

bool known_nonnegative(const Expr& e, const std::map<uint32_t, int64_t>& known) {
  if (!is_integer(e.type)) return false;
  if (std::optional<int64_t> v = fold_constant(e, known)) return *v >= 0;
  switch (e.kind) {
    case ExprKind::kBuiltin: {
      auto b = static_cast<simt::Builtin>(e.op);
      return b != simt::Builtin::kClock && b != simt::Builtin::kCycles;  // counters may wrap
    }
    case ExprKind::kBinary: {
      if (e.args.size() != 2) return false;
      const bool a = known_nonnegative(e.args[0], known), b = known_nonnegative(e.args[1], known);
      switch (static_cast<BinaryOp>(e.op)) {
        // Sums and products of 32-bit indices are assumed not to overflow, as the lowering's
        // address arithmetic already does.
        case BinaryOp::kAdd: case BinaryOp::kMul: case BinaryOp::kDiv: case BinaryOp::kBitOr:
          return a && b;
        case BinaryOp::kMod: case BinaryOp::kShr: return a;
        case BinaryOp::kBitAnd: return a || b;
        default: return false;
      }
    }
    default: return false;
  }
}

std::optional<PtxValue> FunctionEmitter::divide_by_constant(const PtxValue& a, int64_t d,
                                                            bool remainder, bool nonnegative) {
  if (a.type != DType::kI32 && a.type != DType::kU32) return std::nullopt;
  if (d <= 1 || d > INT32_MAX) return std::nullopt;  // 1 folds earlier; negatives stay general
  const bool is_signed = a.type == DType::kI32 && !nonnegative;
  const uint32_t ud = static_cast<uint32_t>(d);
  PtxValue out = new_value(a.type);
  if (std::has_single_bit(ud)) {
    const int k = std::countr_zero(ud);
    if (!is_signed) {
      if (remainder) line("and.b32 ", out.reg, ", ", a.reg, ", ", ud - 1);
      else line("shr.u32 ", out.reg, ", ", a.reg, ", ", k);
      return out;
    }
    // Bias a negative dividend by d - 1 so the arithmetic shift truncates toward zero.
    std::string bias = new_reg(RegClass::kB32);
    line("shr.s32 ", bias, ", ", a.reg, ", 31");
    line("shr.u32 ", bias, ", ", bias, ", ", 32 - k);
    line("add.s32 ", bias, ", ", a.reg, ", ", bias);
    if (remainder) {
      line("and.b32 ", bias, ", ", bias, ", ", -static_cast<int32_t>(ud));
      line("sub.s32 ", out.reg, ", ", a.reg, ", ", bias);
    } else {
      line("shr.s32 ", out.reg, ", ", bias, ", ", k);
    }
    return out;
  }
  // Unsigned dividends below 2^31 (and 2^31 itself, the magnitude of INT32_MIN): with
  // l = ceil(log2 d), m = ceil(2^(31+l) / d) fits 32 bits and floor(n * m / 2^(31+l)) = n / d,
  // since the rounding error m * d - 2^(31+l) < d times n <= 2^31 stays below 2^(31+l).
  // A full-range u32 dividend would need a 33-bit multiplier: leave it to div.u32.
  if (a.type == DType::kU32 && !nonnegative) return std::nullopt;
  const int l = std::bit_width(ud - 1);
  const uint64_t m = ((uint64_t{1} << (31 + l)) + ud - 1) / ud;
  std::string n = a.reg;
  if (is_signed) {
    n = new_reg(RegClass::kB32);
    line("abs.s32 ", n, ", ", a.reg);
  }
  std::string q = new_reg(RegClass::kB32);
  line("mul.hi.u32 ", q, ", ", n, ", ", m);
  if (l > 1) line("shr.u32 ", q, ", ", q, ", ", l - 1);
  if (is_signed) {
    std::string negative = new_reg(RegClass::kPred), neg_q = new_reg(RegClass::kB32);
    line("setp.lt.s32 ", negative, ", ", a.reg, ", 0");
    line("neg.s32 ", neg_q, ", ", q);
    line("selp.b32 ", q, ", ", neg_q, ", ", q, ", ", negative);
  }
  if (remainder) {
    std::string product = new_reg(RegClass::kB32);
    line("mul.lo.s32 ", product, ", ", q, ", ", ud);
    line("sub.s32 ", out.reg, ", ", a.reg, ", ", product);
  } else {
    line("mov.b32 ", out.reg, ", ", q);
  }
  return out;
}

}  // namespace tilert::cuda
