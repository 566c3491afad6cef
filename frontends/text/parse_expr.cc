// Expressions of the .tile format: precedence climbing over the IR's binary operator table.
#include <limits>

#include "absl/strings/str_cat.h"
#include "frontends/text/parser_impl.h"
#include "ir/status.h"

namespace tilert::text {
namespace {

struct BinaryOpSpelling {
  std::string_view spelling;
  BinaryOp op;
};
constexpr BinaryOpSpelling kBinaryOps[] = {
#define TILERT_X(e, s, p) {s, BinaryOp::e},
    TILERT_BINARY_OPS(TILERT_X)
#undef TILERT_X
};

std::optional<BinaryOp> binary_op_at(const Token& t) {
  if (t.kind != TokenKind::kPunct) return std::nullopt;
  for (const auto& b : kBinaryOps)
    if (b.spelling == t.text) return b.op;
  return std::nullopt;
}

struct FuncSpelling {
  std::string_view spelling;
  Func func;
};
constexpr FuncSpelling kFuncs[] = {
#define TILERT_X(e, s, n) {s, Func::e},
    TILERT_FUNCS(TILERT_X)
#undef TILERT_X
};
struct BuiltinSpelling {
  std::string_view spelling;
  Builtin builtin;
};
constexpr BuiltinSpelling kBuiltins[] = {
#define TILERT_X(e, s) {s, Builtin::e},
    TILERT_BUILTINS(TILERT_X)
#undef TILERT_X
};

// Depth of an expression tree; only called on trees already known to be at most a little deeper
// than kMaxNesting, so the recursion is bounded.
int expr_depth(const Expr& e) {
  int deepest = 0;
  for (const Expr& a : e.args) deepest = std::max(deepest, expr_depth(a));
  return deepest + 1;
}

std::string arguments(size_t n) { return absl::StrCat(n, n == 1 ? " argument" : " arguments"); }

}  // namespace

absl::StatusOr<Expr> Parser::parse_expr() {
  RETURN_IF_ERROR(enter_nesting(peek()));
  NestingGuard guard(&nesting_);
  return parse_binary(1);
}

// Left-associative: a - b - c is (a - b) - c. Long operator chains build deep left spines, so the
// resulting tree depth is checked as it grows.
absl::StatusOr<Expr> Parser::parse_binary(int min_precedence) {
  ASSIGN_OR_RETURN(Expr lhs, parse_unary());
  int lhs_depth = -1;
  for (;;) {
    const Token& op_token = peek();
    std::optional<BinaryOp> op = binary_op_at(op_token);
    if (!op || binary_op_precedence(*op) < min_precedence) return lhs;
    take();
    ASSIGN_OR_RETURN(Expr rhs, parse_binary(binary_op_precedence(*op) + 1));
    if (lhs_depth < 0) lhs_depth = expr_depth(lhs);
    lhs_depth = std::max(lhs_depth, expr_depth(rhs)) + 1;
    if (lhs_depth > kMaxNesting)
      return error_at(op_token, absl::StrCat("expression nested deeper than ", kMaxNesting, " levels"));
    lhs = Expr::binary(*op, std::move(lhs), std::move(rhs));
  }
}

absl::StatusOr<Expr> Parser::parse_unary() {
  const Token& t = peek();
  if (at_punct("-")) {
    TokenKind next = peek(1).kind;
    if (next == TokenKind::kInt || next == TokenKind::kFloat ||
        (next == TokenKind::kName && (peek(1).text == "inf" || peek(1).text == "nan")))
      return parse_negative_literal();
  }
  if (!at_punct("-") && !at_punct("!")) return parse_primary();
  UnaryOp op = take().text == "-" ? UnaryOp::kNeg : UnaryOp::kNot;
  RETURN_IF_ERROR(enter_nesting(t));
  NestingGuard guard(&nesting_);
  ASSIGN_OR_RETURN(Expr operand, parse_unary());
  return Expr::unary(op, std::move(operand));
}

// `-1` is the constant -1 (not a negation of 1), so negative constants print and re-read as one
// node; `-(1)` stays a negation.
absl::StatusOr<Expr> Parser::parse_negative_literal() {
  take();  // '-'
  const Token& t = take();
  if (t.kind == TokenKind::kFloat) return Expr::float_const(-t.float_value);
  if (t.kind == TokenKind::kName) {
    double v = t.text == "inf" ? std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::quiet_NaN();
    return Expr::float_const(-v);
  }
  constexpr uint64_t kMinMagnitude = uint64_t{1} << 63;
  if (t.int_magnitude > kMinMagnitude)
    return error_at(t, absl::StrCat("integer literal -", av(t.text), " does not fit in 64 bits"));
  return Expr::int_const(static_cast<int64_t>(0 - t.int_magnitude));
}

absl::StatusOr<Expr> Parser::parse_primary() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::kInt:
      if (t.int_magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return error_at(t, absl::StrCat("integer literal ", av(t.text), " does not fit in 64 bits"));
      return Expr::int_const(static_cast<int64_t>(take().int_magnitude));
    case TokenKind::kFloat:
      return Expr::float_const(take().float_value);
    case TokenKind::kName:
      return parse_name_expr(take());
    default:
      break;
  }
  if (accept_punct("(")) {
    ASSIGN_OR_RETURN(Expr inner, parse_expr());
    RETURN_IF_ERROR(expect_punct(")", "to close '('"));
    return inner;
  }
  return expected("an expression");
}

absl::StatusOr<Expr> Parser::parse_name_expr(const Token& name) {
  std::string_view word = name.text;
  if (word == "true" || word == "false") return Expr::bool_const(word == "true");
  if (word == "inf") return Expr::float_const(std::numeric_limits<double>::infinity());
  if (word == "nan") return Expr::float_const(std::numeric_limits<double>::quiet_NaN());
  for (const auto& b : kBuiltins)
    if (b.spelling == word) return Expr::builtin(b.builtin);
  for (const auto& f : kFuncs) {
    if (f.spelling != word) continue;
    RETURN_IF_ERROR(expect_punct("(", absl::StrCat("after '", av(word), "'")));
    std::string context = absl::StrCat("to close ", av(word), "(...)");
    ASSIGN_OR_RETURN(std::vector<Expr> args, parse_expr_list(")", context));
    if (static_cast<int>(args.size()) != func_arity(f.func))
      return error_at(name, absl::StrCat(av(word), " takes ", arguments(func_arity(f.func)), ", got ",
                                         args.size()));
    return Expr::call(f.func, std::move(args));
  }
  if (std::optional<DType> dtype = dtype_from_name(word)) {
    RETURN_IF_ERROR(expect_punct("(", absl::StrCat("after '", av(word), "' (a conversion)")));
    std::string context = absl::StrCat("to close ", av(word), "(...)");
    ASSIGN_OR_RETURN(std::vector<Expr> args, parse_expr_list(")", context));
    if (args.size() != 1)
      return error_at(name, absl::StrCat(av(word), " takes 1 argument, got ", args.size()));
    return Expr::cast(*dtype, std::move(args[0]));
  }
  if (is_reserved_word(word))
    return error_at(name, absl::StrCat("expected an expression, found keyword '", av(word), "'"));
  ASSIGN_OR_RETURN(SymbolId id, resolve(name));
  DType dtype = kernel_->symbols[id].dtype;
  if (!accept_punct("[")) return Expr::symbol_ref(id, dtype);
  ASSIGN_OR_RETURN(std::vector<Expr> indices,
                   parse_expr_list("]", absl::StrCat("to close the index of '", av(word), "'")));
  return Expr::load(id, dtype, std::move(indices));
}

// One or more comma-separated expressions, then `close` (the opening bracket is already taken).
absl::StatusOr<std::vector<Expr>> Parser::parse_expr_list(std::string_view close,
                                                          std::string_view context) {
  std::vector<Expr> list;
  do {
    ASSIGN_OR_RETURN(Expr e, parse_expr());
    list.push_back(std::move(e));
  } while (accept_punct(","));
  RETURN_IF_ERROR(expect_punct(close, context));
  return list;
}

}  // namespace tilert::text
