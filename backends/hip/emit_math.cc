// Builtins, math functions and subgroup reductions of the AMDGCN emitter. Functions the hardware
// has (exp2, log2, sqrt, fabs, floor, ceil, min, max, sin, cos) are LLVM intrinsics; tanh and erf
// are formulas in f32 (README.md gives their accuracy). f64 transcendentals would need a libm the
// AMDGPU backend does not have, so they are reported as unimplemented.
#include "absl/strings/str_cat.h"
#include "backends/hip/emitter.h"
#include "ir/status.h"

namespace tilert::hip {
namespace {

std::string_view suffix(DType t) { return t == DType::kF64 ? "f64" : "f32"; }

bool is_transcendental(Func f) {
  switch (f) {
    case Func::kExp: case Func::kExp2: case Func::kLog: case Func::kLog2: case Func::kSin:
    case Func::kCos: case Func::kTanh: case Func::kErf: return true;
    default: return false;
  }
}

}  // namespace

std::string Emitter::intrinsic1(std::string_view name, DType t, const std::string& a) {
  std::string_view type = value_type(t);
  declare(absl::StrCat("declare ", av(type), " @llvm.", av(name), ".", av(suffix(t)), "(", av(type), ")"));
  return op(absl::StrCat("call ", av(type), " @llvm.", av(name), ".", av(suffix(t)), "(", av(type), " ", a, ")"));
}

std::string Emitter::intrinsic2(std::string_view name, DType t, const std::string& a,
                                const std::string& b) {
  std::string_view type = value_type(t);
  declare(absl::StrCat("declare ", av(type), " @llvm.", av(name), ".", av(suffix(t)), "(", av(type),
                       ", ", av(type), ")"));
  return op(absl::StrCat("call ", av(type), " @llvm.", av(name), ".", av(suffix(t)), "(", av(type),
                         " ", a, ", ", av(type), " ", b, ")"));
}

std::string Emitter::builtin(simt::Builtin b) {
  auto id_call = [this](std::string_view name) {
    declare(absl::StrCat("declare i32 @llvm.amdgcn.", av(name), "()"));
    return op(absl::StrCat("call i32 @llvm.amdgcn.", av(name), "()"));
  };
  switch (b) {
    case simt::Builtin::kLocalId: return id_call("workitem.id.x");
    case simt::Builtin::kWorkgroupIdX: return id_call("workgroup.id.x");
    case simt::Builtin::kWorkgroupIdY: return id_call("workgroup.id.y");
    case simt::Builtin::kWorkgroupIdZ: return id_call("workgroup.id.z");
    case simt::Builtin::kSubgroupSize: return absl::StrCat(wave_size_);
    case simt::Builtin::kSubgroupLane: {
      // mbcnt counts the set bits of the mask below this lane: with an all-ones mask, the lane.
      declare("declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)");
      std::string low = op("call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)");
      if (wave_size_ == 32) return low;
      declare("declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)");
      return op(absl::StrCat("call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 ", low, ")"));
    }
    case simt::Builtin::kSubgroupId: {
      std::string tid = id_call("workitem.id.x");
      return op(absl::StrCat("lshr i32 ", tid, ", ", wave_size_ == 32 ? 5 : 6));
    }
    case simt::Builtin::kClock:
    case simt::Builtin::kCycles:  // both read the shader cycle counter here
      // s_memtime is gone from gfx11; there LLVM reads the shader cycle counter instead.
      if (target_.arch.rfind("gfx1", 0) == 0 && target_.arch.size() >= 7) {
        declare("declare i64 @llvm.readcyclecounter()");
        return op("call i64 @llvm.readcyclecounter()");
      }
      declare("declare i64 @llvm.amdgcn.s.memtime()");
      return op("call i64 @llvm.amdgcn.s.memtime()");
  }
  return "0";
}

std::string Emitter::tanh_f32(const std::string& x) {
  // |x| >= 0.3: tanh = (1 - e) / (1 + e) with e = exp(-2|x|), sign restored; below, the odd
  // Taylor series to x^9 (its next term is under 2e-8 relative there), which avoids the
  // cancellation in 1 - e near zero.
  std::string magnitude = intrinsic1("fabs", DType::kF32, x);
  std::string scaled = op(absl::StrCat("fmul float ", magnitude, ", ", float_literal(-2.0 * 1.4426950408889634, DType::kF32)));
  std::string e = intrinsic1("exp2", DType::kF32, scaled);
  std::string numerator = op(absl::StrCat("fsub float 1.0, ", e));
  std::string denominator = op(absl::StrCat("fadd float 1.0, ", e));
  std::string ratio = op(absl::StrCat("fdiv float ", numerator, ", ", denominator));
  std::string large = intrinsic2("copysign", DType::kF32, ratio, x);
  std::string x2 = op(absl::StrCat("fmul float ", x, ", ", x));
  const double series[] = {62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0};
  std::string poly = float_literal(series[0], DType::kF32);
  for (int i = 1; i < 5; ++i) {
    std::string product = op(absl::StrCat("fmul float ", poly, ", ", x2));
    poly = op(absl::StrCat("fadd float ", product, ", ", float_literal(series[i], DType::kF32)));
  }
  std::string small = op(absl::StrCat("fmul float ", poly, ", ", x));
  std::string is_small = op(absl::StrCat("fcmp olt float ", magnitude, ", ", float_literal(0.3, DType::kF32)));
  return op(absl::StrCat("select i1 ", is_small, ", float ", small, ", float ", large));
}

std::string Emitter::erf_f32(const std::string& x) {
  // |x| < 0.6: the Taylor series 2/sqrt(pi) (x - x^3/3 + ... + x^13/9360), next term under 1e-8.
  // Otherwise erf = 1 - erfc(|x|) with sign restored, erfc(z) = t exp(-z^2 + P(t)),
  // t = 1 / (1 + z/2): the Chebyshev fit of Numerical Recipes (erfcc), fractional error < 1.2e-7.
  std::string z = intrinsic1("fabs", DType::kF32, x);
  std::string x2 = op(absl::StrCat("fmul float ", x, ", ", x));
  const double taylor[] = {1.0 / 9360.0, -1.0 / 1320.0, 1.0 / 216.0, -1.0 / 42.0, 1.0 / 10.0,
                           -1.0 / 3.0, 1.0};
  std::string poly = float_literal(taylor[0], DType::kF32);
  for (int i = 1; i < 7; ++i) {
    std::string product = op(absl::StrCat("fmul float ", poly, ", ", x2));
    poly = op(absl::StrCat("fadd float ", product, ", ", float_literal(taylor[i], DType::kF32)));
  }
  std::string series = op(absl::StrCat("fmul float ", poly, ", ", x));
  std::string small = op(absl::StrCat("fmul float ", series, ", ", float_literal(1.1283791670955126, DType::kF32)));

  std::string half_z = op(absl::StrCat("fmul float ", z, ", 0.5"));
  std::string one_plus = op(absl::StrCat("fadd float ", half_z, ", 1.0"));
  std::string t = op(absl::StrCat("fdiv float 1.0, ", one_plus));
  const double chebyshev[] = {0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
                              -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223};
  std::string p = float_literal(chebyshev[0], DType::kF32);
  for (int i = 1; i < 10; ++i) {
    std::string product = op(absl::StrCat("fmul float ", p, ", ", t));
    p = op(absl::StrCat("fadd float ", product, ", ", float_literal(chebyshev[i], DType::kF32)));
  }
  std::string z2 = op(absl::StrCat("fmul float ", z, ", ", z));
  std::string exponent = op(absl::StrCat("fsub float ", p, ", ", z2));
  std::string e = intrinsic1("exp", DType::kF32, exponent);
  std::string erfc = op(absl::StrCat("fmul float ", t, ", ", e));
  std::string positive = op(absl::StrCat("fsub float 1.0, ", erfc));
  std::string large = intrinsic2("copysign", DType::kF32, positive, x);
  std::string is_small = op(absl::StrCat("fcmp olt float ", z, ", ", float_literal(0.6, DType::kF32)));
  return op(absl::StrCat("select i1 ", is_small, ", float ", small, ", float ", large));
}

absl::StatusOr<std::string> Emitter::call(const simt::Expr& e) {
  Func f = static_cast<Func>(e.op);
  if (e.args.size() != static_cast<size_t>(func_arity(f))) {
    return absl::InvalidArgumentError(absl::StrCat(av(func_name(f)), " takes ", func_arity(f),
                                                   " arguments, got ", e.args.size()));
  }
  if (is_transcendental(f) && e.type != DType::kF32) {
    return absl::UnimplementedError(absl::StrCat(av(func_name(f)), " on ", av(dtype_name(e.type)),
                                                 ": only f32 transcendentals on amdgcn"));
  }
  std::vector<std::string> a;
  for (const simt::Expr& arg : e.args) {
    ASSIGN_OR_RETURN(std::string v, expr(arg));
    a.push_back(std::move(v));
  }
  DType t = e.type;
  std::string_view type = value_type(t);
  bool signed_int = dtype_kind(t) == DTypeKind::kSigned;
  switch (f) {
    case Func::kExp: return intrinsic1("exp", t, a[0]);
    case Func::kExp2: return intrinsic1("exp2", t, a[0]);
    case Func::kLog: return intrinsic1("log", t, a[0]);
    case Func::kLog2: return intrinsic1("log2", t, a[0]);
    case Func::kSin: return intrinsic1("sin", t, a[0]);
    case Func::kCos: return intrinsic1("cos", t, a[0]);
    case Func::kTanh: return tanh_f32(a[0]);
    case Func::kErf: return erf_f32(a[0]);
    case Func::kSqrt: return intrinsic1("sqrt", t, a[0]);
    case Func::kRsqrt: {
      std::string root = intrinsic1("sqrt", t, a[0]);
      return op(absl::StrCat("fdiv ", av(type), " 1.0, ", root));
    }
    case Func::kFloor: return intrinsic1("floor", t, a[0]);
    case Func::kCeil: return intrinsic1("ceil", t, a[0]);
    case Func::kFma: {
      declare(absl::StrCat("declare ", av(type), " @llvm.fma.", av(suffix(t)), "(", av(type), ", ", av(type), ", ",
                           av(type), ")"));
      return op(absl::StrCat("call ", av(type), " @llvm.fma.", av(suffix(t)), "(", av(type), " ", a[0], ", ", av(type),
                             " ", a[1], ", ", av(type), " ", a[2], ")"));
    }
    case Func::kAbs: {
      if (is_float(t)) return intrinsic1("fabs", t, a[0]);
      if (!signed_int) return a[0];
      std::string negative = op(absl::StrCat("icmp slt ", av(type), " ", a[0], ", 0"));
      std::string negated = op(absl::StrCat("sub ", av(type), " 0, ", a[0]));
      return op(absl::StrCat("select i1 ", negative, ", ", av(type), " ", negated, ", ", av(type), " ", a[0]));
    }
    case Func::kMin: case Func::kMax:
      return combine(f == Func::kMin ? ReduceKind::kMin : ReduceKind::kMax, t, a[0], a[1]);
    case Func::kSelect:
      return op(absl::StrCat("select i1 ", a[0], ", ", av(type), " ", a[1], ", ", av(type), " ", a[2]));
    case Func::kCeilDiv:
      return absl::InvalidArgumentError("ceildiv must be expanded before emission");
  }
  return absl::InvalidArgumentError("unknown function");
}

std::string Emitter::combine(ReduceKind kind, DType t, const std::string& a, const std::string& b) {
  std::string_view type = value_type(t);
  if (kind == ReduceKind::kSum) {
    return op(absl::StrCat(is_float(t) ? "fadd " : "add ", av(type), " ", a, ", ", b));
  }
  bool max = kind == ReduceKind::kMax;
  if (is_float(t)) return intrinsic2(max ? "maxnum" : "minnum", t, a, b);
  bool s = dtype_kind(t) == DTypeKind::kSigned;
  std::string predicate = max ? (s ? "sgt" : "ugt") : (s ? "slt" : "ult");
  std::string first = op(absl::StrCat("icmp ", predicate, " ", av(type), " ", a, ", ", b));
  return op(absl::StrCat("select i1 ", first, ", ", av(type), " ", a, ", ", av(type), " ", b));
}

}  // namespace tilert::hip
