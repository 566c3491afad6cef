#include "frontends/cpp/value.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::tl {

Value Value::invalid(std::string message) {
  Value v(Expr::int_const(0));
  v.error_ = message.empty() ? "invalid value" : std::move(message);
  return v;
}

Value combine(std::initializer_list<const Value*> operands, Expr made) {
  for (const Value* v : operands)
    if (!v->ok()) return *v;
  return Value(std::move(made));
}

// The parser reads `-1` and `-inf` as one negative constant, so a negated literal folds the same
// way here; anything else is a negation node.
Value operator-(const Value& a) {
  const Expr& e = a.ir();
  if (a.ok() && e.kind == ExprKind::kIntConst && e.type == Expr::int_const(e.int_value).type &&
      e.int_value != std::numeric_limits<int64_t>::min())
    return Value(Expr::int_const(-e.int_value));
  if (a.ok() && e.kind == ExprKind::kFloatConst && e.type == DType::kF32)
    return Value(Expr::float_const(-e.float_value));
  return combine({&a}, Expr::unary(UnaryOp::kNeg, e));
}

Value operator!(const Value& a) { return combine({&a}, Expr::unary(UnaryOp::kNot, a.ir())); }

#define TILERT_TL_BINARY(op, kind)                                  \
  Value operator op(const Value& a, const Value& b) {               \
    return combine({&a, &b}, Expr::binary(BinaryOp::kind, a.ir(), b.ir())); \
  }
TILERT_TL_BINARY(+, kAdd)
TILERT_TL_BINARY(-, kSub)
TILERT_TL_BINARY(*, kMul)
TILERT_TL_BINARY(/, kDiv)
TILERT_TL_BINARY(%, kMod)
TILERT_TL_BINARY(==, kEq)
TILERT_TL_BINARY(!=, kNe)
TILERT_TL_BINARY(<, kLt)
TILERT_TL_BINARY(<=, kLe)
TILERT_TL_BINARY(>, kGt)
TILERT_TL_BINARY(>=, kGe)
TILERT_TL_BINARY(&&, kAnd)
TILERT_TL_BINARY(||, kOr)
TILERT_TL_BINARY(&, kBitAnd)
TILERT_TL_BINARY(|, kBitOr)
TILERT_TL_BINARY(^, kBitXor)
TILERT_TL_BINARY(<<, kShl)
TILERT_TL_BINARY(>>, kShr)
#undef TILERT_TL_BINARY

namespace {

Value call_func(Func f, std::initializer_list<const Value*> args) {
  std::vector<Expr> irs;
  for (const Value* a : args) irs.push_back(a->ir());
  return combine(args, Expr::call(f, std::move(irs)));
}

}  // namespace

Value exp(const Value& a) { return call_func(Func::kExp, {&a}); }
Value exp2(const Value& a) { return call_func(Func::kExp2, {&a}); }
Value log(const Value& a) { return call_func(Func::kLog, {&a}); }
Value log2(const Value& a) { return call_func(Func::kLog2, {&a}); }
Value sqrt(const Value& a) { return call_func(Func::kSqrt, {&a}); }
Value rsqrt(const Value& a) { return call_func(Func::kRsqrt, {&a}); }
Value abs(const Value& a) { return call_func(Func::kAbs, {&a}); }
Value tanh(const Value& a) { return call_func(Func::kTanh, {&a}); }
Value erf(const Value& a) { return call_func(Func::kErf, {&a}); }
Value sin(const Value& a) { return call_func(Func::kSin, {&a}); }
Value cos(const Value& a) { return call_func(Func::kCos, {&a}); }
Value floor(const Value& a) { return call_func(Func::kFloor, {&a}); }
Value ceil(const Value& a) { return call_func(Func::kCeil, {&a}); }
Value min(const Value& a, const Value& b) { return call_func(Func::kMin, {&a, &b}); }
Value max(const Value& a, const Value& b) { return call_func(Func::kMax, {&a, &b}); }
Value ceildiv(const Value& a, const Value& b) { return call_func(Func::kCeilDiv, {&a, &b}); }
Value select(const Value& condition, const Value& if_true, const Value& if_false) {
  return call_func(Func::kSelect, {&condition, &if_true, &if_false});
}
Value fma(const Value& a, const Value& b, const Value& c) { return call_func(Func::kFma, {&a, &b, &c}); }

Value call(std::string_view function, std::vector<Value> args) {
  constexpr Func kFuncs[] = {
#define TILERT_X(e, s, n) Func::e,
      TILERT_FUNCS(TILERT_X)
#undef TILERT_X
  };
  for (Func f : kFuncs) {
    if (func_name(f) != function) continue;
    if (static_cast<int>(args.size()) != func_arity(f))
      return Value::invalid(absl::StrCat(av(function), " takes ", func_arity(f),
                                         func_arity(f) == 1 ? " argument" : " arguments", ", got ",
                                         args.size()));
    std::vector<Expr> irs;
    for (const Value& a : args) {
      if (!a.ok()) return a;
      irs.push_back(a.ir());
    }
    return Value(Expr::call(f, std::move(irs)));
  }
  return Value::invalid(absl::StrCat("unknown function '", av(function), "'"));
}

Value cast(DType to, const Value& a) { return combine({&a}, Expr::cast(to, a.ir())); }
Value tx() { return Value(Expr::builtin(Builtin::kThreadX)); }
Value bx() { return Value(Expr::builtin(Builtin::kBlockX)); }
Value by() { return Value(Expr::builtin(Builtin::kBlockY)); }
Value bz() { return Value(Expr::builtin(Builtin::kBlockZ)); }
Value inf() { return Value(Expr::float_const(std::numeric_limits<double>::infinity())); }
Value nan() { return Value(Expr::float_const(std::numeric_limits<double>::quiet_NaN())); }

RegionRef::RegionRef(const Buffer& b) : buffer(b.id()), name(b.name()) {}
RegionRef::RegionRef(const Buffer& b, std::vector<RangeArg> r)
    : buffer(b.id()), name(b.name()), ranges(std::move(r)) {}

Value Buffer::at_indices(std::vector<Value> indices) const {
  if (id_ == kNoSymbol) return Value::invalid("use of a buffer that was never declared");
  if (indices.size() != rank_) {
    if (indices.empty())
      return Value::invalid(absl::StrCat("'", name_, "' has ", rank_,
                                         " dimension(s): use it with indices or as a region"));
    return Value::invalid(absl::StrCat("'", name_, "' has ", rank_, " dimension(s), indexed with ",
                                       indices.size()));
  }
  std::vector<Expr> irs;
  for (const Value& i : indices) {
    if (!i.ok()) return i;
    irs.push_back(i.ir());
  }
  if (indices.empty()) return Value(Expr::symbol_ref(id_, dtype_));
  return Value(Expr::load(id_, dtype_, std::move(irs)));
}

MbarrierSlot::MbarrierSlot(const Mbarrier& b) : barrier(b.id()), name(b.name()), index(0) {}
MbarrierSlot::MbarrierSlot(const Mbarrier& b, Value i)
    : barrier(b.id()), name(b.name()), index(std::move(i)) {}

}  // namespace tilert::tl
