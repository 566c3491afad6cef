// Expression evaluation for one thread. Integer-typed expressions compute exactly in int64 with
// the IR's C semantics, wrapped to their type at every node; float-typed ones compute in double
// (rounded only by explicit conversions and at stores, and only in Precision::kExact).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends/cpu/executor.h"
#include "ir/status.h"

namespace tilert::cpu {

absl::Status TaskExecutor::eval(const Expr& e, int64_t tx, Value* out) {
  switch (e.kind) {
    case ExprKind::kIntConst:
      *out = Value::integer(wrap_to(e.int_value, holds_int(e.type) ? e.type : DType::kI64));
      if (!holds_int(e.type)) *out = convert(*out, e.type, exact());
      return absl::OkStatus();
    case ExprKind::kFloatConst:
      *out = convert(Value::real(e.float_value), e.type, exact());
      return absl::OkStatus();
    case ExprKind::kBoolConst:
      *out = Value::integer(e.int_value != 0);
      return absl::OkStatus();
    case ExprKind::kSymbol:
      return eval_symbol(e, tx, out);
    case ExprKind::kBuiltin:
      switch (static_cast<Builtin>(e.op)) {
        case Builtin::kThreadX: *out = Value::integer(tx); break;
        case Builtin::kBlockX: *out = Value::integer(block_.index[0]); break;
        case Builtin::kBlockY: *out = Value::integer(block_.index[1]); break;
        case Builtin::kBlockZ: *out = Value::integer(block_.index[2]); break;
        default: return error(absl::StrCat("unknown builtin ", e.op));
      }
      return absl::OkStatus();
    case ExprKind::kUnary: {
      if (e.args.size() != 1) return error("unary operator without its operand");
      Value a;
      RETURN_IF_ERROR(eval(e.args[0], tx, &a));
      if (static_cast<UnaryOp>(e.op) == UnaryOp::kNot) {
        *out = Value::integer(a.truthy() ? 0 : 1);
      } else if (holds_int(e.type)) {
        *out = Value::integer(wrap_to(static_cast<int64_t>(0 - static_cast<uint64_t>(a.as_int())), e.type));
      } else {
        *out = Value::real(-a.as_double());
      }
      return absl::OkStatus();
    }
    case ExprKind::kBinary:
      return eval_binary(e, tx, out);
    case ExprKind::kCall:
      return eval_call(e, tx, out);
    case ExprKind::kCast: {
      if (e.args.size() != 1) return error("conversion without its operand");
      Value a;
      RETURN_IF_ERROR(eval(e.args[0], tx, &a));
      *out = convert(a, e.type, exact());
      return absl::OkStatus();
    }
    case ExprKind::kLoad:
      return eval_load(e, tx, out);
  }
  return error(absl::StrCat("unknown expression kind ", static_cast<int>(e.kind)));
}

absl::Status TaskExecutor::eval_symbol(const Expr& e, int64_t tx, Value* out) {
  if (e.symbol >= kernel_.symbols.size()) return error(absl::StrCat("unknown symbol #", e.symbol));
  const Symbol& s = kernel_.symbols[e.symbol];
  switch (s.kind) {
    case SymbolKind::kScalarParam:
      if (e.symbol >= launch_.scalars.size()) return error(absl::StrCat(s.name, " has no value"));
      *out = launch_.scalars[e.symbol];
      return absl::OkStatus();
    case SymbolKind::kLocal:
    case SymbolKind::kLoopVar: {
      Tile* tile;
      RETURN_IF_ERROR(storage(e.symbol, &tile));
      if (tile->elements() != 1 || !tile->shape().empty())
        return error(absl::StrCat(s.name, " is an array; index it"));
      *out = tile->get(tx, 0);
      return absl::OkStatus();
    }
    default:
      return error(absl::StrCat(s.name, " (", av(symbol_kind_name(s.kind)), ") is not a scalar"));
  }
}

absl::Status TaskExecutor::eval_load(const Expr& e, int64_t tx, Value* out) {
  if (e.symbol >= kernel_.symbols.size()) return error(absl::StrCat("unknown symbol #", e.symbol));
  const Symbol& s = kernel_.symbols[e.symbol];
  std::vector<int64_t> index(e.args.size());
  for (size_t d = 0; d < e.args.size(); ++d) {
    Value v;
    RETURN_IF_ERROR(eval(e.args[d], tx, &v));
    index[d] = v.as_int();
  }
  if (s.kind == SymbolKind::kTensorParam) {
    const GlobalTensor* tensor_arg;
    RETURN_IF_ERROR(tensor(e.symbol, &tensor_arg));
    const GlobalTensor& t = *tensor_arg;
    if (index.size() != t.shape.size())
      return error(absl::StrCat(s.name, " has ", t.shape.size(), " dimensions but is indexed with ", index.size()));
    for (size_t d = 0; d < index.size(); ++d)
      if (index[d] < 0 || index[d] >= t.shape[d])
        return error(out_of_bounds_message(s.name, d, index[d], t.shape[d]));
    *out = t.read(t.offset(index));
    return absl::OkStatus();
  }
  if (s.kind != SymbolKind::kShared && s.kind != SymbolKind::kFragment && s.kind != SymbolKind::kLocal)
    return error(absl::StrCat(s.name, " (", av(symbol_kind_name(s.kind)), ") cannot be indexed"));
  Tile* tile;
  RETURN_IF_ERROR(storage(e.symbol, &tile));
  int64_t offset;
  std::string bad = tile->offset_of(index, &offset);
  if (!bad.empty()) return error(bad);
  if (races_ != nullptr && s.kind == SymbolKind::kShared)
    races_->read(*tile, offset, parallel_threads_ != nullptr ? kGroupLane : tx, current_);
  *out = tile->get(s.kind == SymbolKind::kLocal ? tx : 0, offset);
  return absl::OkStatus();
}

namespace {

Value compare(BinaryOp op, Value a, Value b, DType operand_type) {
  if (holds_int(operand_type)) {
    int64_t x = wrap_to(a.as_int(), operand_type), y = wrap_to(b.as_int(), operand_type), r = 0;
    eval_int_binary(op, x, y, &r);
    return Value::integer(r);
  }
  double x = a.as_double(), y = b.as_double();
  bool r = false;
  switch (op) {
    case BinaryOp::kEq: r = x == y; break;
    case BinaryOp::kNe: r = x != y; break;
    case BinaryOp::kLt: r = x < y; break;
    case BinaryOp::kLe: r = x <= y; break;
    case BinaryOp::kGt: r = x > y; break;
    case BinaryOp::kGe: r = x >= y; break;
    default: break;
  }
  return Value::integer(r);
}

}  // namespace

absl::Status TaskExecutor::eval_binary(const Expr& e, int64_t tx, Value* out) {
  if (e.args.size() != 2) return error("binary operator without two operands");
  if (e.op > static_cast<uint8_t>(BinaryOp::kMod)) return error(absl::StrCat("unknown binary operator #", e.op));
  auto op = static_cast<BinaryOp>(e.op);
  Value a, b;
  RETURN_IF_ERROR(eval(e.args[0], tx, &a));
  // && and || short-circuit as in C, so `i < n && A[i] > 0` never reads out of bounds.
  if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
    if (a.truthy() == (op == BinaryOp::kOr)) {
      *out = Value::integer(a.truthy() ? 1 : 0);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(eval(e.args[1], tx, &b));
    *out = Value::integer(b.truthy() ? 1 : 0);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(eval(e.args[1], tx, &b));
  if (binary_op_is_comparison(op)) {
    *out = compare(op, a, b, promote(e.args[0].type, e.args[1].type));
    return absl::OkStatus();
  }
  if (holds_int(e.type)) {
    int64_t r;
    if (!eval_int_binary(op, wrap_to(a.as_int(), e.type), wrap_to(b.as_int(), e.type), &r))
      return error(absl::StrCat("integer ", av(binary_op_name(op)), " by zero (or overflowing)"));
    *out = Value::integer(wrap_to(r, e.type));
    return absl::OkStatus();
  }
  double x = a.as_double(), y = b.as_double();
  switch (op) {
    case BinaryOp::kAdd: *out = Value::real(x + y); return absl::OkStatus();
    case BinaryOp::kSub: *out = Value::real(x - y); return absl::OkStatus();
    case BinaryOp::kMul: *out = Value::real(x * y); return absl::OkStatus();
    case BinaryOp::kDiv: *out = Value::real(x / y); return absl::OkStatus();
    case BinaryOp::kMod: *out = Value::real(std::fmod(x, y)); return absl::OkStatus();
    default:
      return error(absl::StrCat("operator ", av(binary_op_name(op)), " needs integer operands"));
  }
}

namespace {

double apply_math(Func f, double x) {
  switch (f) {
    case Func::kExp: return std::exp(x);
    case Func::kExp2: return std::exp2(x);
    case Func::kLog: return std::log(x);
    case Func::kLog2: return std::log2(x);
    case Func::kSqrt: return std::sqrt(x);
    case Func::kRsqrt: return 1.0 / std::sqrt(x);
    case Func::kAbs: return std::fabs(x);
    case Func::kTanh: return std::tanh(x);
    case Func::kErf: return std::erf(x);
    case Func::kSin: return std::sin(x);
    case Func::kCos: return std::cos(x);
    case Func::kFloor: return std::floor(x);
    case Func::kCeil: return std::ceil(x);
    default: return std::nan("");
  }
}

}  // namespace

absl::Status TaskExecutor::eval_call(const Expr& e, int64_t tx, Value* out) {
  auto f = static_cast<Func>(e.op);
  if (e.op >= static_cast<uint8_t>(Func::kFma) + 1 || static_cast<int>(e.args.size()) != func_arity(f))
    return error(absl::StrCat("call of function #", e.op, " with ", e.args.size(), " arguments"));
  Value a;
  RETURN_IF_ERROR(eval(e.args[0], tx, &a));
  if (f == Func::kSelect) {  // only the chosen operand is evaluated (guards out-of-bounds loads)
    Value chosen;
    RETURN_IF_ERROR(eval(e.args[a.truthy() ? 1 : 2], tx, &chosen));
    *out = convert(chosen, e.type, false);
    return absl::OkStatus();
  }
  if (f == Func::kFma) {  // one rounding: std::fma in double, then the result type's rounding
    Value b, c;
    RETURN_IF_ERROR(eval(e.args[1], tx, &b));
    RETURN_IF_ERROR(eval(e.args[2], tx, &c));
    *out = Value::real(std::fma(a.as_double(), b.as_double(), c.as_double()));
    return absl::OkStatus();
  }
  if (func_arity(f) == 1) {
    if (holds_int(e.type)) {  // abs of an integer
      int64_t x = wrap_to(a.as_int(), e.type);
      *out = Value::integer(wrap_to(x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x, e.type));
    } else {
      *out = Value::real(apply_math(f, a.as_double()));
    }
    return absl::OkStatus();
  }
  Value b;
  RETURN_IF_ERROR(eval(e.args[1], tx, &b));
  if (holds_int(e.type)) {
    int64_t x = wrap_to(a.as_int(), e.type), y = wrap_to(b.as_int(), e.type);
    if (f == Func::kCeilDiv) {
      if (y <= 0) return error(absl::StrCat("ceildiv by ", y, " (must be positive)"));
      *out = Value::integer(wrap_to(x / y + (x % y > 0 ? 1 : 0), e.type));
    } else {
      *out = Value::integer(f == Func::kMin ? std::min(x, y) : std::max(x, y));
    }
    return absl::OkStatus();
  }
  double x = a.as_double(), y = b.as_double();
  // fmin / fmax ignore a NaN operand, as GPU min/max instructions do.
  if (f == Func::kMin) *out = Value::real(std::fmin(x, y));
  else if (f == Func::kMax) *out = Value::real(std::fmax(x, y));
  else *out = Value::real(std::ceil(x / y));
  return absl::OkStatus();
}

bool TaskExecutor::thread_dependent(const Expr& e) const {
  bool dependent = false;
  visit_expr(e, [&](const Expr& node) {
    if (node.kind == ExprKind::kBuiltin && static_cast<Builtin>(node.op) == Builtin::kThreadX) dependent = true;
    if ((node.kind == ExprKind::kSymbol || node.kind == ExprKind::kLoad) && node.symbol < kernel_.symbols.size()) {
      SymbolKind k = kernel_.symbols[node.symbol].kind;
      if (k == SymbolKind::kLocal || k == SymbolKind::kLoopVar) dependent = true;
    }
  });
  return dependent;
}

absl::Status TaskExecutor::eval_uniform(const Expr& e, const ActiveThreads& threads, std::string_view what,
                                        Value* out) {
  int64_t first = threads.first_active();
  if (first < 0) return error(absl::StrCat(av(what), ": no active thread"));
  RETURN_IF_ERROR(eval(e, first, out));
  if (!thread_dependent(e)) return absl::OkStatus();
  absl::Status status;
  threads.for_each([&](int64_t tx) {
    Value v;
    if (!status.ok() || tx == first) return;
    status = eval(e, tx, &v);
    if (status.ok() && !v.same_as(*out))
      status = error(absl::StrCat(av(what), " differs between threads (tx ", first, ": ",
                                  out->as_double(), ", tx ", tx, ": ", v.as_double(), ")"));
  });
  return status;
}

absl::Status TaskExecutor::eval_uniform_int(const Expr& e, const ActiveThreads& threads, std::string_view what,
                                            int64_t* out) {
  Value v;
  RETURN_IF_ERROR(eval_uniform(e, threads, what, &v));
  if (!v.is_int) return error(absl::StrCat(av(what), " must be an integer (got ", v.f, ")"));
  *out = v.i;
  return absl::OkStatus();
}

}  // namespace tilert::cpu
