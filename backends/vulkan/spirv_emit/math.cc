// Math functions through GLSL.std.450, the erf approximation (GLSL has none), and the integer
// bit manipulations that give f16 and bf16 their rounding.
#include <spirv/unified1/GLSL.std.450.h>

#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan::spirv_emit {
namespace {
using spv::Op;
}  // namespace

Id Emitter::call(const simt::Expr& e) {
  auto func = static_cast<Func>(e.op);
  if (static_cast<int>(e.args.size()) != func_arity(func) || func == Func::kCeilDiv) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("call of ", av(func_name(func)), " with ", e.args.size(), " arguments")));
  }
  std::vector<Id> args;
  for (const simt::Expr& a : e.args) args.push_back(expr(a));
  if (failed()) return 0;
  DType t = e.type;
  Id type = repr_type(t);
  bool is_f64 = t == DType::kF64;
  DTypeKind kind = dtype_kind(t);
  // GLSL.std.450's transcendental functions take 16- and 32-bit floats only: f64 goes through
  // f32 (the lowering keeps f64 to index math and plain arithmetic in practice).
  auto transcendental = [&](auto compute) {
    Id x = is_f64 ? b_.emit(Op::OpFConvert, f32_type(), {args[0]}) : args[0];
    Id y = compute(x);
    return is_f64 ? b_.emit(Op::OpFConvert, type, {y}) : y;
  };
  auto glsl_f32 = [&](GLSLstd450 instruction) {
    return transcendental([&](Id x) { return glsl(f32_type(), instruction, {x}); });
  };
  auto need_float = [&]() -> bool {
    if (kind == DTypeKind::kFloat) return true;
    fail(absl::InvalidArgumentError(absl::StrCat(av(func_name(func)), " of a ", av(dtype_name(t)), " value")));
    return false;
  };
  switch (func) {
    case Func::kExp: return need_float() ? glsl_f32(GLSLstd450Exp) : 0;
    case Func::kExp2: return need_float() ? glsl_f32(GLSLstd450Exp2) : 0;
    case Func::kLog: return need_float() ? glsl_f32(GLSLstd450Log) : 0;
    case Func::kLog2: return need_float() ? glsl_f32(GLSLstd450Log2) : 0;
    case Func::kTanh: return need_float() ? glsl_f32(GLSLstd450Tanh) : 0;
    case Func::kSin: return need_float() ? glsl_f32(GLSLstd450Sin) : 0;
    case Func::kCos: return need_float() ? glsl_f32(GLSLstd450Cos) : 0;
    case Func::kErf:
      return need_float() ? transcendental([&](Id x) { return erf_f32(x); }) : 0;
    case Func::kSqrt: return need_float() ? glsl(type, GLSLstd450Sqrt, args) : 0;
    case Func::kRsqrt: return need_float() ? glsl(type, GLSLstd450InverseSqrt, args) : 0;
    case Func::kFloor: return need_float() ? glsl(type, GLSLstd450Floor, args) : 0;
    case Func::kCeil: return need_float() ? glsl(type, GLSLstd450Ceil, args) : 0;
    case Func::kFma: return need_float() ? glsl(type, GLSLstd450Fma, args) : 0;
    case Func::kAbs:
      if (kind == DTypeKind::kUnsigned) return args[0];
      return glsl(type, kind == DTypeKind::kFloat ? GLSLstd450FAbs : GLSLstd450SAbs, args);
    case Func::kMin:
      return glsl(type, kind == DTypeKind::kFloat    ? GLSLstd450FMin
                        : kind == DTypeKind::kSigned ? GLSLstd450SMin
                                                     : GLSLstd450UMin,
                  args);
    case Func::kMax:
      return glsl(type, kind == DTypeKind::kFloat    ? GLSLstd450FMax
                        : kind == DTypeKind::kSigned ? GLSLstd450SMax
                                                     : GLSLstd450UMax,
                  args);
    case Func::kSelect: return b_.emit(Op::OpSelect, type, args);
    case Func::kCeilDiv: break;
  }
  return fail(absl::InvalidArgumentError(absl::StrCat("unknown function ", static_cast<int>(func))));
}

Id Emitter::f32_to_f16_bits(Id x) {
  Id vec2 = b_.type_vector(f32_type(), 2);
  Id pair = b_.emit(Op::OpCompositeConstruct, vec2, {x, f32(0.0f)});
  return glsl(u32_type(), GLSLstd450PackHalf2x16, {pair});
}

Id Emitter::f16_bits_to_f32(Id bits) {
  Id pair = glsl(b_.type_vector(f32_type(), 2), GLSLstd450UnpackHalf2x16, {bits});
  return b_.emit(Op::OpCompositeExtract, f32_type(), {pair, 0});
}

// Through the 16-bit encoding and back; works without any 16-bit feature.
Id Emitter::round_to_f16(Id x) { return f16_bits_to_f32(f32_to_f16_bits(x)); }

// Round to nearest even on the f32 bits; a NaN keeps its sign and stays a (quiet) NaN rather
// than rounding up into infinity.
Id Emitter::f32_to_bf16_bits(Id x) {
  Id u = b_.emit(Op::OpBitcast, u32_type(), {x});
  Id magnitude = b_.emit(Op::OpBitwiseAnd, u32_type(), {u, u32(0x7fffffffu)});
  Id is_nan = b_.emit(Op::OpUGreaterThan, bool_type(), {magnitude, u32(0x7f800000u)});
  Id high = b_.emit(Op::OpShiftRightLogical, u32_type(), {u, u32(16)});
  Id quiet_nan = b_.emit(Op::OpBitwiseOr, u32_type(), {high, u32(0x40)});
  Id lsb = b_.emit(Op::OpBitwiseAnd, u32_type(), {high, u32(1)});
  Id bias = b_.emit(Op::OpIAdd, u32_type(), {lsb, u32(0x7fff)});
  Id rounded = b_.emit(Op::OpShiftRightLogical, u32_type(),
                       {b_.emit(Op::OpIAdd, u32_type(), {u, bias}), u32(16)});
  return b_.emit(Op::OpSelect, u32_type(), {is_nan, quiet_nan, rounded});
}

Id Emitter::bf16_bits_to_f32(Id bits) {
  Id u = b_.emit(Op::OpShiftLeftLogical, u32_type(), {bits, u32(16)});
  return b_.emit(Op::OpBitcast, f32_type(), {u});
}

// erf in f32 with an absolute error below 2e-7: the Taylor series for |x| < 0.5, and
// 1 - erfc(|x|) with the sign of x beyond, erfc from the Chebyshev-fitted form of Press et al.
// (fractional error < 1.2e-7).
Id Emitter::erf_f32(Id x) {
  Id f = f32_type();
  auto mul = [&](Id a, Id b) { return b_.emit(Op::OpFMul, f, {a, b}); };
  auto add = [&](Id a, Id b) { return b_.emit(Op::OpFAdd, f, {a, b}); };
  auto horner = [&](Id v, std::initializer_list<double> highest_first) {
    Id p = 0;
    for (double c : highest_first) p = p == 0 ? f32(static_cast<float>(c)) : add(mul(p, v), f32(static_cast<float>(c)));
    return p;
  };
  Id a = glsl(f, GLSLstd450FAbs, {x});
  Id z = mul(x, x);
  Id series = horner(z, {-1.0 / 75600, 1.0 / 9360, -1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10,
                         -1.0 / 3, 1.0});
  Id small = mul(mul(x, series), f32(1.1283791670955126f));

  Id t = b_.emit(Op::OpFDiv, f, {f32(1.0f), add(f32(1.0f), mul(f32(0.5f), a))});
  Id poly = horner(t, {0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
                       0.09678418, 0.37409196, 1.00002368, -1.26551223});
  Id exponent = add(b_.emit(Op::OpFNegate, f, {mul(a, a)}), poly);
  Id erfc = mul(t, glsl(f, GLSLstd450Exp, {exponent}));
  Id magnitude = b_.emit(Op::OpFSub, f, {f32(1.0f), erfc});
  Id sign = b_.emit(Op::OpBitwiseAnd, u32_type(), {b_.emit(Op::OpBitcast, u32_type(), {x}), u32(0x80000000u)});
  Id large = b_.emit(Op::OpBitcast, f,
                     {b_.emit(Op::OpBitwiseOr, u32_type(),
                              {b_.emit(Op::OpBitcast, u32_type(), {magnitude}), sign})});
  Id use_series = b_.emit(Op::OpFOrdLessThan, bool_type(), {a, f32(0.5f)});
  return b_.emit(Op::OpSelect, f, {use_series, small, large});
}

}  // namespace tilert::vulkan::spirv_emit
