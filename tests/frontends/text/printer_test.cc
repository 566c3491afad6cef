// The printer on hand-built expression trees: parentheses, negative constants, float digits.
#include <cmath>
#include <limits>

#include "tests/frontends/text/text_test_util.h"

namespace tilert {
namespace {

using text_test::in_kernel;
using text_test::parse_ok;

// The kernel of in_kernel(...) with no statements: names a, b, c (i32) are symbols 1, 2, 3.
Kernel names_kernel() { return parse_ok(in_kernel("")).kernels[0]; }

Expr sym(SymbolId id) { return Expr::symbol_ref(id, DType::kI32); }

// print_expr, then parse that text back as an assignment value: must give the same tree.
void check_prints_as(const Expr& e, const std::string& text) {
  Kernel k = names_kernel();
  std::string printed = print_expr(k, e);
  CHECK(printed == text);
  Module m = parse_ok(in_kernel("x = " + printed));
  const AssignOp* assign = m.kernels[0].body[0].as<AssignOp>();
  REQUIRE(assign != nullptr);
  CHECK(assign->value == e);
}

TEST_CASE("parentheses appear exactly where the tree would otherwise re-associate") {
  Expr a = sym(1), b = sym(2), c = sym(3);
  check_prints_as(Expr::binary(BinaryOp::kSub, a, Expr::binary(BinaryOp::kSub, b, c)), "a - (b - c)");
  check_prints_as(Expr::binary(BinaryOp::kSub, Expr::binary(BinaryOp::kSub, a, b), c), "a - b - c");
  check_prints_as(Expr::binary(BinaryOp::kMul, Expr::binary(BinaryOp::kAdd, a, b), c), "(a + b) * c");
  check_prints_as(Expr::binary(BinaryOp::kAdd, a, Expr::binary(BinaryOp::kMul, b, c)), "a + b * c");
  check_prints_as(Expr::binary(BinaryOp::kDiv, a, Expr::binary(BinaryOp::kMul, b, c)), "a / (b * c)");
  check_prints_as(Expr::binary(BinaryOp::kOr, Expr::binary(BinaryOp::kAnd, a, b), c), "a && b || c");
  check_prints_as(Expr::binary(BinaryOp::kAnd, Expr::binary(BinaryOp::kOr, a, b), c), "(a || b) && c");
  check_prints_as(Expr::unary(UnaryOp::kNeg, Expr::binary(BinaryOp::kAdd, a, b)), "-(a + b)");
  check_prints_as(Expr::unary(UnaryOp::kNot, Expr::binary(BinaryOp::kLt, a, b)), "!(a < b)");
  check_prints_as(Expr::unary(UnaryOp::kNeg, Expr::unary(UnaryOp::kNeg, a)), "--a");
}

TEST_CASE("negative constants print as one literal; a negated constant keeps its parentheses") {
  Expr a = sym(1);
  check_prints_as(Expr::int_const(-1), "-1");
  check_prints_as(Expr::unary(UnaryOp::kNeg, Expr::int_const(1)), "-(1)");
  check_prints_as(Expr::unary(UnaryOp::kNeg, Expr::int_const(-1)), "-(-1)");
  check_prints_as(Expr::binary(BinaryOp::kSub, a, Expr::int_const(-1)), "a - -1");
  check_prints_as(Expr::binary(BinaryOp::kMul, Expr::int_const(-2), a), "-2 * a");
  check_prints_as(Expr::binary(BinaryOp::kMul, Expr::unary(UnaryOp::kNeg, Expr::int_const(2)), a),
                  "-(2) * a");
  check_prints_as(Expr::float_const(-2.5), "-2.5");
  check_prints_as(Expr::unary(UnaryOp::kNeg, Expr::float_const(2.5)), "-(2.5)");
  check_prints_as(Expr::int_const(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
}

TEST_CASE("floats print with the fewest digits that read back to the same double") {
  check_prints_as(Expr::float_const(1.0), "1.0");
  check_prints_as(Expr::float_const(0.1), "0.1");
  check_prints_as(Expr::float_const(1.0 / 3.0), "0.3333333333333333");
  check_prints_as(Expr::float_const(1e300), "1e+300");
  check_prints_as(Expr::float_const(5e-324), "5e-324");
  check_prints_as(Expr::float_const(-0.0), "-0.0");
  check_prints_as(Expr::float_const(std::numeric_limits<double>::infinity()), "inf");
  check_prints_as(Expr::float_const(-std::numeric_limits<double>::infinity()), "-inf");
  check_prints_as(Expr::float_const(std::numeric_limits<double>::quiet_NaN()), "nan");
  check_prints_as(Expr::float_const(-std::numeric_limits<double>::quiet_NaN()), "-nan");
}

TEST_CASE("print_expr names symbols and survives malformed trees") {
  Kernel k = names_kernel();
  CHECK(print_expr(k, Expr::load(0, DType::kF32, {sym(1), Expr::builtin(Builtin::kBlockZ)})) == "T[a, bz]");
  CHECK(print_expr(k, Expr::call(Func::kCeilDiv, {sym(2), Expr::int_const(64)})) == "ceildiv(b, 64)");
  CHECK(print_expr(k, Expr::cast(DType::kBF16, Expr::float_const(0.5))) == "bf16(0.5)");
  CHECK(print_expr(k, Expr::symbol_ref(999, DType::kI32)) == "<symbol 999>");
  Expr broken = Expr::binary(BinaryOp::kAdd, sym(1), sym(2));
  broken.args.pop_back();
  CHECK(print_expr(k, broken) == "a + <missing operand>");
}

TEST_CASE("builder-made float constants of other dtypes print their value") {
  Kernel k = names_kernel();
  CHECK(print_expr(k, Expr::float_const(1.5, DType::kF16)) == "1.5");
}

TEST_CASE("a clear is a fill with integer zero; any other value prints as fill") {
  Module m = parse_ok(in_kernel("clear T\nfill T, 0.0\nfill T[0], 0"));
  std::string printed = print_kernel(m.kernels[0]);
  CHECK(printed.find("  clear T\n  fill T, 0.0\n  clear T[0]\n") != std::string::npos);
}

}  // namespace
}  // namespace tilert
