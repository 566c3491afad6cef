#include "ir/expr.h"

#include <doctest/doctest.h>

namespace tilert {

TEST_CASE("constant folding follows C integer semantics and ceildiv") {
  Expr e = Expr::binary(BinaryOp::kDiv, Expr::int_const(-7), Expr::int_const(2));
  CHECK(const_int_value(e) == -3);
  CHECK(const_int_value(Expr::binary(BinaryOp::kMod, Expr::int_const(-7), Expr::int_const(2))) == -1);
  CHECK(const_int_value(Expr::call(Func::kCeilDiv, {Expr::int_const(129), Expr::int_const(64)})) == 3);
  CHECK_FALSE(const_int_value(Expr::binary(BinaryOp::kDiv, Expr::int_const(1), Expr::int_const(0))));
  CHECK_FALSE(const_int_value(Expr::symbol_ref(0, DType::kI32)));
}

TEST_CASE("types are computed at construction") {
  Expr h = Expr::symbol_ref(0, DType::kF16);
  CHECK(Expr::binary(BinaryOp::kMul, h, Expr::float_const(0.5)).type == DType::kF32);
  CHECK(Expr::binary(BinaryOp::kLt, h, h).type == DType::kBool);
  CHECK(Expr::call(Func::kExp2, {h}).type == DType::kF16);
  CHECK(Expr::call(Func::kExp, {Expr::int_const(1)}).type == DType::kF32);
  CHECK(Expr::int_const(int64_t{1} << 40).type == DType::kI64);
}

}  // namespace tilert
