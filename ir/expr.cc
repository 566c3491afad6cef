#include "ir/expr.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace tilert {
namespace {

struct BinaryInfo {
  std::string_view name;
  int precedence;
};
constexpr BinaryInfo kBinary[] = {
#define TILERT_X(e, s, p) {s, p},
    TILERT_BINARY_OPS(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kUnary[] = {
#define TILERT_X(e, s) s,
    TILERT_UNARY_OPS(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kBuiltins[] = {
#define TILERT_X(e, s) s,
    TILERT_BUILTINS(TILERT_X)
#undef TILERT_X
};
struct FuncInfo {
  std::string_view name;
  int arity;
};
constexpr FuncInfo kFuncs[] = {
#define TILERT_X(e, s, n) {s, n},
    TILERT_FUNCS(TILERT_X)
#undef TILERT_X
};

}  // namespace

std::string_view builtin_name(Builtin b) { return kBuiltins[static_cast<int>(b)]; }
std::string_view binary_op_name(BinaryOp op) { return kBinary[static_cast<int>(op)].name; }
int binary_op_precedence(BinaryOp op) { return kBinary[static_cast<int>(op)].precedence; }
bool binary_op_is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEq: case BinaryOp::kNe: case BinaryOp::kLt: case BinaryOp::kLe:
    case BinaryOp::kGt: case BinaryOp::kGe: case BinaryOp::kAnd: case BinaryOp::kOr:
      return true;
    default:
      return false;
  }
}
std::string_view unary_op_name(UnaryOp op) { return kUnary[static_cast<int>(op)]; }
std::string_view func_name(Func f) { return kFuncs[static_cast<int>(f)].name; }
int func_arity(Func f) { return kFuncs[static_cast<int>(f)].arity; }

Expr Expr::int_const(int64_t v) {
  bool fits = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return int_const(v, fits ? DType::kI32 : DType::kI64);
}
Expr Expr::int_const(int64_t v, DType type) {
  Expr e;
  e.kind = ExprKind::kIntConst;
  e.type = type;
  e.int_value = v;
  return e;
}
Expr Expr::float_const(double v, DType type) {
  Expr e;
  e.kind = ExprKind::kFloatConst;
  e.type = type;
  e.float_value = v;
  return e;
}
Expr Expr::bool_const(bool v) {
  Expr e;
  e.kind = ExprKind::kBoolConst;
  e.type = DType::kBool;
  e.int_value = v ? 1 : 0;
  return e;
}
Expr Expr::symbol_ref(SymbolId id, DType type) {
  Expr e;
  e.kind = ExprKind::kSymbol;
  e.type = type;
  e.symbol = id;
  return e;
}
Expr Expr::builtin(Builtin b) {
  Expr e;
  e.kind = ExprKind::kBuiltin;
  e.type = DType::kI32;
  e.op = static_cast<uint8_t>(b);
  return e;
}
Expr Expr::unary(UnaryOp op, Expr a) {
  Expr e;
  e.kind = ExprKind::kUnary;
  e.op = static_cast<uint8_t>(op);
  e.type = op == UnaryOp::kNot ? DType::kBool : (a.type == DType::kBool ? DType::kI32 : a.type);
  e.args.push_back(std::move(a));
  return e;
}
Expr Expr::binary(BinaryOp op, Expr a, Expr b) {
  Expr e;
  e.kind = ExprKind::kBinary;
  e.op = static_cast<uint8_t>(op);
  e.type = binary_op_is_comparison(op) ? DType::kBool : promote(a.type, b.type);
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return e;
}
Expr Expr::call(Func f, std::vector<Expr> args) {
  Expr e;
  e.kind = ExprKind::kCall;
  e.op = static_cast<uint8_t>(f);
  switch (f) {
    case Func::kMin: case Func::kMax: case Func::kCeilDiv:
      e.type = args.size() == 2 ? promote(args[0].type, args[1].type) : DType::kI32;
      break;
    case Func::kSelect:
      e.type = args.size() == 3 ? promote(args[1].type, args[2].type) : DType::kI32;
      if (args.size() == 3 && args[1].type == args[2].type) e.type = args[1].type;
      break;
    case Func::kAbs:
      e.type = args.empty() ? DType::kI32 : (args[0].type == DType::kBool ? DType::kI32 : args[0].type);
      break;
    case Func::kFma:
      e.type = args.size() == 3 ? promote(promote(args[0].type, args[1].type), args[2].type) : DType::kF32;
      if (!is_float(e.type)) e.type = DType::kF32;
      break;
    default:
      // Transcendentals are float: integer arguments compute in f32.
      e.type = args.empty() || !is_float(args[0].type) ? DType::kF32 : args[0].type;
      break;
  }
  e.args = std::move(args);
  return e;
}
Expr Expr::cast(DType to, Expr a) {
  Expr e;
  e.kind = ExprKind::kCast;
  e.type = to;
  e.args.push_back(std::move(a));
  return e;
}
Expr Expr::load(SymbolId buffer, DType element_type, std::vector<Expr> indices) {
  Expr e;
  e.kind = ExprKind::kLoad;
  e.type = element_type;
  e.symbol = buffer;
  e.args = std::move(indices);
  return e;
}

bool Expr::operator==(const Expr& o) const {
  if (kind != o.kind || type != o.type || symbol != o.symbol || op != o.op ||
      int_value != o.int_value || args != o.args)
    return false;
  // Compare float constants bitwise so NaN == NaN and 0.0 != -0.0.
  return std::bit_cast<uint64_t>(float_value) == std::bit_cast<uint64_t>(o.float_value);
}

bool eval_int_binary(BinaryOp op, int64_t a, int64_t b, int64_t* out) {
  switch (op) {
    case BinaryOp::kOr: *out = (a != 0) || (b != 0); return true;
    case BinaryOp::kAnd: *out = (a != 0) && (b != 0); return true;
    case BinaryOp::kBitOr: *out = a | b; return true;
    case BinaryOp::kBitXor: *out = a ^ b; return true;
    case BinaryOp::kBitAnd: *out = a & b; return true;
    case BinaryOp::kEq: *out = a == b; return true;
    case BinaryOp::kNe: *out = a != b; return true;
    case BinaryOp::kLt: *out = a < b; return true;
    case BinaryOp::kLe: *out = a <= b; return true;
    case BinaryOp::kGt: *out = a > b; return true;
    case BinaryOp::kGe: *out = a >= b; return true;
    case BinaryOp::kShl: *out = (b < 0 || b > 63) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b); return true;
    case BinaryOp::kShr: *out = (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : (a >> b); return true;
    case BinaryOp::kAdd: *out = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); return true;
    case BinaryOp::kSub: *out = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); return true;
    case BinaryOp::kMul: *out = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); return true;
    case BinaryOp::kDiv:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return false;
      *out = a / b;
      return true;
    case BinaryOp::kMod:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return false;
      *out = a % b;
      return true;
  }
  return false;
}

std::optional<int64_t> const_int_value(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kIntConst:
    case ExprKind::kBoolConst:
      return e.int_value;
    case ExprKind::kUnary: {
      auto a = const_int_value(e.args[0]);
      if (!a) return std::nullopt;
      return static_cast<UnaryOp>(e.op) == UnaryOp::kNeg ? -*a : static_cast<int64_t>(*a == 0);
    }
    case ExprKind::kBinary: {
      if (is_float(e.type)) return std::nullopt;
      auto a = const_int_value(e.args[0]);
      auto b = const_int_value(e.args[1]);
      int64_t out;
      if (!a || !b || !eval_int_binary(static_cast<BinaryOp>(e.op), *a, *b, &out)) return std::nullopt;
      return out;
    }
    case ExprKind::kCall: {
      if (is_float(e.type)) return std::nullopt;
      std::vector<int64_t> v;
      for (const Expr& a : e.args) {
        auto x = const_int_value(a);
        if (!x) return std::nullopt;
        v.push_back(*x);
      }
      switch (static_cast<Func>(e.op)) {
        case Func::kMin: return std::min(v[0], v[1]);
        case Func::kMax: return std::max(v[0], v[1]);
        case Func::kAbs: return v[0] < 0 ? -v[0] : v[0];
        case Func::kCeilDiv:
          if (v[1] <= 0) return std::nullopt;
          return (v[0] + v[1] - 1) / v[1];
        case Func::kSelect: return v[0] ? v[1] : v[2];
        default: return std::nullopt;
      }
    }
    case ExprKind::kCast: {
      if (!is_integer(e.type) && e.type != DType::kBool) return std::nullopt;
      return const_int_value(e.args[0]);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace tilert
