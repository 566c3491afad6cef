// PTX for SIMT calls (min, max, select, abs and the math functions) and for subgroup
// reductions. f32 math uses the hardware's approximate instructions (ex2, lg2, sin, cos, tanh,
// rsqrt); f64 has only what PTX offers natively (sqrt, rsqrt, floor, ceil, abs, min, max).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_function.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

using simt::Expr;

const char* float_suffix(DType t) { return t == DType::kF64 ? "f64" : "f32"; }

const char* ordered_suffix(DType t) {
  switch (t) {
    case DType::kI32: return "s32";
    case DType::kU32: return "u32";
    case DType::kI64: return "s64";
    case DType::kF64: return "f64";
    default: return "f32";
  }
}

const char* select_suffix(DType t) {
  switch (reg_class(t)) {
    case RegClass::kB16: return "b16";
    case RegClass::kB64: return "b64";
    case RegClass::kF32: return "f32";
    case RegClass::kF64: return "f64";
    default: return "b32";
  }
}

constexpr float kLog2E = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

}  // namespace

absl::StatusOr<PtxValue> FunctionEmitter::call(const Expr& e) {
  auto f = static_cast<Func>(e.op);
  if (static_cast<int>(e.args.size()) != func_arity(f))
    return error(absl::StrCat(av(func_name(f)), " needs ", func_arity(f), " arguments, has ",
                              e.args.size()));
  std::vector<PtxValue> args;
  for (size_t i = 0; i < e.args.size(); ++i) {
    ASSIGN_OR_RETURN(PtxValue a, expr(e.args[i]));
    DType want = (f == Func::kSelect && i == 0) ? DType::kBool : e.type;
    ASSIGN_OR_RETURN(a, cast(a, want));
    args.push_back(a);
  }
  const DType t = e.type;
  PtxValue out = new_value(t);
  auto unary = [&](const std::string& inst, const std::string& src) {
    line(inst, " ", out.reg, ", ", src);
    return out;
  };
  switch (f) {
    case Func::kMin: case Func::kMax:
      line(f == Func::kMin ? "min." : "max.", ordered_suffix(t), " ", out.reg, ", ",
           args[0].reg, ", ", args[1].reg);
      return out;
    case Func::kSelect:
      if (t == DType::kBool) return error("select of bool values");
      line("selp.", select_suffix(t), " ", out.reg, ", ", args[1].reg, ", ",
           args[2].reg, ", ", args[0].reg);
      return out;
    case Func::kAbs:
      if (t == DType::kU32) return args[0];
      return unary(absl::StrCat("abs.", ordered_suffix(t)), args[0].reg);
    case Func::kCeilDiv: return error("ceildiv reached the emitter (the lowering expands it)");
    default: break;
  }
  if (t != DType::kF32 && t != DType::kF64)
    return error(absl::StrCat(av(func_name(f)), " of ", av(dtype_name(t))));
  const std::string x = args[0].reg;
  const char* s = float_suffix(t);
  switch (f) {
    case Func::kSqrt: return unary(absl::StrCat("sqrt.rn.", s), x);
    case Func::kFma:
      line("fma.rn.", s, " ", out.reg, ", ", x, ", ", args[1].reg, ", ", args[2].reg);
      return out;
    case Func::kRsqrt: return unary(absl::StrCat("rsqrt.approx.", s), x);
    case Func::kFloor: return unary(absl::StrCat("cvt.rmi.", s, ".", s), x);
    case Func::kCeil: return unary(absl::StrCat("cvt.rpi.", s, ".", s), x);
    default: break;
  }
  if (t == DType::kF64)
    return unimplemented(absl::StrCat(av(func_name(f)), " of f64 (PTX has no f64 instruction for it)"));
  switch (f) {
    case Func::kExp2: return unary("ex2.approx.ftz.f32", x);
    case Func::kLog2: return unary("lg2.approx.ftz.f32", x);
    case Func::kTanh: return unary("tanh.approx.f32", x);
    case Func::kSin: return unary("sin.approx.f32", x);
    case Func::kCos: return unary("cos.approx.f32", x);
    case Func::kExp: {  // e^x = 2^(x log2 e)
      PtxValue scaled = new_value(t);
      line("mul.rn.f32 ", scaled.reg, ", ", x, ", ", f32_value(kLog2E).reg);
      return unary("ex2.approx.ftz.f32", scaled.reg);
    }
    case Func::kLog: {  // ln x = log2(x) ln 2
      PtxValue log2 = new_value(t);
      line("lg2.approx.ftz.f32 ", log2.reg, ", ", x);
      line("mul.rn.f32 ", out.reg, ", ", log2.reg, ", ", f32_value(kLn2).reg);
      return out;
    }
    case Func::kErf: return erf_f32(x);
    default: break;
  }
  return unimplemented(absl::StrCat("function ", av(func_name(f))));
}

// erf in f32, branch-free, with erf(-x) = -erf(x): the Maclaurin series through x^21 for
// |x| < 1.1 and Abramowitz & Stegun 7.1.26 above. Simulated in f32 with ex2.approx's error
// bound, the worst absolute error over [-6, 6] is 1.8e-7 (A&S alone exceeds 2e-7 near 0.5,
// hence the series below 1.1).
absl::StatusOr<PtxValue> FunctionEmitter::erf_f32(const std::string& x) {
  auto op3 = [&](const char* inst, const std::string& a, const std::string& b) {
    std::string d = new_reg(RegClass::kF32);
    line(inst, " ", d, ", ", a, ", ", b);
    return d;
  };
  auto fma = [&](const std::string& a, const std::string& b, const std::string& c) {
    std::string d = new_reg(RegClass::kF32);
    line("fma.rn.f32 ", d, ", ", a, ", ", b, ", ", c);
    return d;
  };
  auto k = [&](double v) { return f32_value(static_cast<float>(v)).reg; };
  std::string ax = new_reg(RegClass::kF32);
  line("abs.f32 ", ax, ", ", x);
  std::string x2 = op3("mul.rn.f32", ax, ax);

  // Series: erf(x) = 2/sqrt(pi) sum_k (-1)^k x^(2k+1) / (k! (2k+1)).
  const double two_over_sqrt_pi = 1.1283791670955126;
  double factorial = 1;
  constexpr int kTerms = 11;
  double coefficients[kTerms];
  for (int i = 0; i < kTerms; ++i) {
    if (i > 0) factorial *= i;
    coefficients[i] = two_over_sqrt_pi * (i % 2 ? -1 : 1) / (factorial * (2 * i + 1));
  }
  std::string series = k(coefficients[kTerms - 1]);
  for (int i = kTerms - 2; i >= 0; --i) series = fma(series, x2, k(coefficients[i]));
  series = op3("mul.rn.f32", series, ax);

  // A&S 7.1.26: 1 - (a1 t + ... + a5 t^5) e^(-x^2), t = 1 / (1 + p x).
  std::string denominator = fma(k(0.3275911), ax, k(1.0));
  std::string t = new_reg(RegClass::kF32);
  line("rcp.rn.f32 ", t, ", ", denominator);
  std::string poly = k(1.061405429);
  for (double a : {-1.453152027, 1.421413741, -0.284496736, 0.254829592}) poly = fma(poly, t, k(a));
  poly = op3("mul.rn.f32", poly, t);
  std::string exponent = op3("mul.rn.f32", x2, k(-kLog2E));
  std::string gauss = new_reg(RegClass::kF32);
  line("ex2.approx.ftz.f32 ", gauss, ", ", exponent);
  std::string neg_poly = new_reg(RegClass::kF32);
  line("neg.f32 ", neg_poly, ", ", poly);
  std::string tail = fma(neg_poly, gauss, k(1.0));

  std::string small = new_reg(RegClass::kPred);
  line("setp.lt.f32 ", small, ", ", ax, ", ", k(1.1));
  std::string magnitude = new_reg(RegClass::kF32);
  line("selp.f32 ", magnitude, ", ", series, ", ", tail, ", ", small);
  PtxValue out = new_value(DType::kF32);
  line("copysign.f32 ", out.reg, ", ", x, ", ", magnitude);
  return out;
}

absl::StatusOr<PtxValue> FunctionEmitter::subgroup_reduce(const Expr& e) {
  const DType t = e.type;
  if (t != DType::kI32 && t != DType::kU32 && t != DType::kI64 && t != DType::kF32 &&
      t != DType::kF64)
    return error(absl::StrCat("subgroup reduction of ", av(dtype_name(t))));
  ASSIGN_OR_RETURN(PtxValue value, expr(e.args[0]));
  ASSIGN_OR_RETURN(value, cast(value, t));
  auto kind = static_cast<ReduceKind>(e.op);
  const bool flt = t == DType::kF32 || t == DType::kF64;
  std::string combine = kind == ReduceKind::kSum ? absl::StrCat("add.", flt ? "rn." : "", ordered_suffix(t))
                        : absl::StrCat(kind == ReduceKind::kMax ? "max." : "min.", ordered_suffix(t));
  const bool wide = dtype_size(t) == 8;
  // A butterfly over the 32 lanes of a warp: after five exchanges every lane holds the result
  // (a + b == b + a, so the lanes agree bit for bit even for floats). A cluster of c lanes
  // stops at offset c / 2: lanes exchange only within their aligned group of c (the 4 lanes
  // of an mma.m16n8k16 quad, which hold one row of an accumulator, for c = 4).
  const int64_t cluster = e.int_value == 0 ? 32 : e.int_value;
  if (cluster < 2 || cluster > 32 || (cluster & (cluster - 1)) != 0)
    return error(absl::StrCat("a subgroup reduction over clusters of ", e.int_value, " lanes"));
  std::string acc = value.reg;
  for (int64_t offset = cluster / 2; offset >= 1; offset /= 2) {
    PtxValue partner = new_value(t);
    if (!wide) {
      line("shfl.sync.bfly.b32 ", partner.reg, ", ", acc, ", ", offset,
           ", 0x1f, 0xffffffff");
    } else {
      std::string lo = new_reg(RegClass::kB32), hi = new_reg(RegClass::kB32);
      line("mov.b64 {", lo, ", ", hi, "}, ", acc);
      line("shfl.sync.bfly.b32 ", lo, ", ", lo, ", ", offset, ", 0x1f, 0xffffffff");
      line("shfl.sync.bfly.b32 ", hi, ", ", hi, ", ", offset, ", 0x1f, 0xffffffff");
      line("mov.b64 ", partner.reg, ", {", lo, ", ", hi, "}");
    }
    PtxValue next = new_value(t);
    line(combine, " ", next.reg, ", ", acc, ", ", partner.reg);
    acc = next.reg;
  }
  return PtxValue{acc, t};
}

}  // namespace tilert::cuda
