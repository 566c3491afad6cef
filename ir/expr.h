// Scalar expressions of the tile IR: index math over kernel parameters and loop variables, and the
// element-wise math of parallel loops and thread-level code. Trees of values; every node knows its
// type, computed when it is built (never stored in bytecode except for constants and casts).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace tilert {

using SymbolId = uint32_t;
inline constexpr SymbolId kNoSymbol = 0xffffffffu;

// X(enumerator, text spelling, bytecode code)
#define TILERT_EXPR_KINDS(X) \
  X(kIntConst, "int", 0)     \
  X(kFloatConst, "float", 1) \
  X(kBoolConst, "bool", 2)   \
  X(kSymbol, "symbol", 3)    \
  X(kBuiltin, "builtin", 4)  \
  X(kUnary, "unary", 5)      \
  X(kBinary, "binary", 6)    \
  X(kCall, "call", 7)        \
  X(kCast, "cast", 8)        \
  X(kLoad, "load", 9)

enum class ExprKind : uint8_t {
#define TILERT_X(e, s, c) e = c,
  TILERT_EXPR_KINDS(TILERT_X)
#undef TILERT_X
};

// Thread/block indices. tx is the thread's index in its block (roles do not renumber it).
// X(enumerator, spelling)
#define TILERT_BUILTINS(X) X(kThreadX, "tx") X(kBlockX, "bx") X(kBlockY, "by") X(kBlockZ, "bz")
enum class Builtin : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_BUILTINS(TILERT_X)
#undef TILERT_X
};

// X(enumerator, spelling, precedence (higher binds tighter))
#define TILERT_BINARY_OPS(X) \
  X(kOr, "||", 1)            \
  X(kAnd, "&&", 2)           \
  X(kBitOr, "|", 3)          \
  X(kBitXor, "^", 4)         \
  X(kBitAnd, "&", 5)         \
  X(kEq, "==", 6)            \
  X(kNe, "!=", 6)            \
  X(kLt, "<", 7)             \
  X(kLe, "<=", 7)            \
  X(kGt, ">", 7)             \
  X(kGe, ">=", 7)            \
  X(kShl, "<<", 8)           \
  X(kShr, ">>", 8)           \
  X(kAdd, "+", 9)            \
  X(kSub, "-", 9)            \
  X(kMul, "*", 10)           \
  X(kDiv, "/", 10)           \
  X(kMod, "%", 10)
enum class BinaryOp : uint8_t {
#define TILERT_X(e, s, p) e,
  TILERT_BINARY_OPS(TILERT_X)
#undef TILERT_X
};

#define TILERT_UNARY_OPS(X) X(kNeg, "-") X(kNot, "!")
enum class UnaryOp : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_UNARY_OPS(TILERT_X)
#undef TILERT_X
};

// Named functions. X(enumerator, spelling, arity). Integer division/modulo follow C (truncate);
// ceildiv(a, b) = (a + b - 1) / b for b > 0. select(c, a, b) is c ? a : b. fma(a, b, c) is
// a * b + c rounded once (float; integer arguments compute in f32): the one way to ask for a
// fused multiply-add, since no backend contracts a * b + c by itself.
#define TILERT_FUNCS(X)   \
  X(kExp, "exp", 1)       \
  X(kExp2, "exp2", 1)     \
  X(kLog, "log", 1)       \
  X(kLog2, "log2", 1)     \
  X(kSqrt, "sqrt", 1)     \
  X(kRsqrt, "rsqrt", 1)   \
  X(kAbs, "abs", 1)       \
  X(kTanh, "tanh", 1)     \
  X(kErf, "erf", 1)       \
  X(kSin, "sin", 1)       \
  X(kCos, "cos", 1)       \
  X(kFloor, "floor", 1)   \
  X(kCeil, "ceil", 1)     \
  X(kMin, "min", 2)       \
  X(kMax, "max", 2)       \
  X(kCeilDiv, "ceildiv", 2) \
  X(kSelect, "select", 3)  \
  X(kFma, "fma", 3)
enum class Func : uint8_t {
#define TILERT_X(e, s, n) e,
  TILERT_FUNCS(TILERT_X)
#undef TILERT_X
};

std::string_view builtin_name(Builtin b);
std::string_view binary_op_name(BinaryOp op);
int binary_op_precedence(BinaryOp op);
bool binary_op_is_comparison(BinaryOp op);  // ==, !=, <, <=, >, >=, &&, || (result bool)
std::string_view unary_op_name(UnaryOp op);
std::string_view func_name(Func f);
int func_arity(Func f);

// One expression node. Fields are read according to `kind`:
//   kIntConst: int_value (type i32 when it fits, else i64, unless built with an explicit type)
//   kFloatConst: float_value (type f32 unless built with an explicit type)
//   kBoolConst: int_value 0/1
//   kSymbol: symbol (a scalar parameter, loop variable or per-thread local scalar)
//   kBuiltin: builtin
//   kUnary / kBinary / kCall: op (UnaryOp / BinaryOp / Func as integer), args
//   kCast: type is the target, args[0] the value
//   kLoad: symbol (tensor, shared, fragment or local array), args are the indices
struct Expr {
  ExprKind kind = ExprKind::kIntConst;
  DType type = DType::kI32;
  int64_t int_value = 0;
  double float_value = 0.0;
  SymbolId symbol = kNoSymbol;
  uint8_t op = 0;
  std::vector<Expr> args;

  static Expr int_const(int64_t v);
  static Expr int_const(int64_t v, DType type);
  static Expr float_const(double v, DType type = DType::kF32);
  static Expr bool_const(bool v);
  static Expr symbol_ref(SymbolId id, DType type);
  static Expr builtin(Builtin b);
  static Expr unary(UnaryOp op, Expr a);
  static Expr binary(BinaryOp op, Expr a, Expr b);
  static Expr call(Func f, std::vector<Expr> args);
  static Expr cast(DType to, Expr a);
  static Expr load(SymbolId buffer, DType element_type, std::vector<Expr> indices);

  bool is_int_const() const { return kind == ExprKind::kIntConst; }
  bool operator==(const Expr& other) const;
};

// Folds constant integer subtrees (used for tile shapes and static bounds); nullopt when `e`
// depends on anything but constants.
std::optional<int64_t> const_int_value(const Expr& e);

// Evaluates integer math with the IR's semantics (C truncation; ceildiv). Returns false on division
// by zero.
bool eval_int_binary(BinaryOp op, int64_t a, int64_t b, int64_t* out);

// Calls `fn(node)` for `e` and every sub-expression, parents first.
template <typename Fn>
void visit_expr(const Expr& e, Fn&& fn) {
  fn(e);
  for (const Expr& a : e.args) visit_expr(a, fn);
}

}  // namespace tilert
