#include "ir/verify/interval.h"

#include <doctest/doctest.h>

namespace tilert {

namespace {
Kernel block_of(int32_t threads) {
  Kernel k;
  k.threads = threads;
  return k;
}
Expr i32(int64_t v) { return Expr::int_const(v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return Expr::binary(op, std::move(a), std::move(b)); }
}  // namespace

TEST_CASE("intervals: index arithmetic over loop variables") {
  Kernel kernel = block_of(128);
  IntervalEnv env(kernel);
  env.set_symbol(0, Interval::all_of(0, Interval::kInf));  // k in 0 .. unknown
  Expr k = Expr::symbol_ref(0, DType::kI32);
  CHECK(env.of(bin(BinaryOp::kMod, k, i32(2))).to_string() == "[0, 1]");
  CHECK(env.of(bin(BinaryOp::kMod, bin(BinaryOp::kAdd, bin(BinaryOp::kDiv, k, i32(2)), i32(1)), i32(2)))
            .to_string() == "[0, 1]");
  CHECK(env.of(bin(BinaryOp::kMul, k, i32(64))).to_string() == "[0, inf]");
  CHECK(env.of(Expr::builtin(Builtin::kThreadX)).to_string() == "[0, 127]");
  CHECK(env.of(bin(BinaryOp::kBitAnd, Expr::symbol_ref(5, DType::kI32), i32(7))).to_string() == "[0, 7]");
  CHECK(env.of(Expr::call(Func::kCeilDiv, {i32(129), i32(64)})).to_string() == "3");
  CHECK(env.of(bin(BinaryOp::kDiv, i32(-7), i32(2))).to_string() == "-3");
  CHECK(env.of(bin(BinaryOp::kShr, i32(-7), i32(1))).to_string() == "-4");
}

TEST_CASE("intervals: an unknown dividend keeps an unknown lower end under %") {
  Kernel kernel = block_of(32);
  IntervalEnv env(kernel);
  Expr s = Expr::symbol_ref(3, DType::kI32);  // a local: not tracked
  Interval r = env.of(bin(BinaryOp::kMod, s, i32(4)));
  CHECK(r.lo == -Interval::kInf);
  CHECK(r.hi == 3);
}

TEST_CASE("intervals: conditions narrow loop variables and tx") {
  Kernel kernel = block_of(128);
  IntervalEnv env(kernel);
  env.set_symbol(0, Interval::all_of(0, 7));
  Expr k = Expr::symbol_ref(0, DType::kI32);
  Expr tx = Expr::builtin(Builtin::kThreadX);
  CHECK(env.narrowed(bin(BinaryOp::kLt, k, i32(4)), true).of(k).to_string() == "[0, 3]");
  CHECK(env.narrowed(bin(BinaryOp::kLt, k, i32(4)), false).of(k).to_string() == "[4, 7]");
  CHECK(env.narrowed(bin(BinaryOp::kGt, i32(31), tx), true).of(tx).to_string() == "[0, 30]");
  Expr both = bin(BinaryOp::kAnd, bin(BinaryOp::kGe, k, i32(2)), bin(BinaryOp::kLe, k, i32(5)));
  CHECK(env.narrowed(both, true).of(k).to_string() == "[2, 5]");
  CHECK(env.narrowed(Expr::unary(UnaryOp::kNot, bin(BinaryOp::kEq, k, i32(3))), false).of(k).to_string() == "3");
  CHECK_FALSE(env.narrowed(bin(BinaryOp::kGt, k, i32(9)), true).reachable());
}

TEST_CASE("intervals: only ranges whose ends are really reached are exact") {
  Kernel kernel = block_of(64);
  IntervalEnv env(kernel);
  env.set_symbol(0, Interval::all_of(0, 7));
  Expr k = Expr::symbol_ref(0, DType::kI32);
  Expr tx = Expr::builtin(Builtin::kThreadX);
  CHECK(env.of(bin(BinaryOp::kMod, k, i32(4))).exact);
  CHECK(env.of(bin(BinaryOp::kAdd, bin(BinaryOp::kMul, k, i32(64)), i32(3))).exact);
  // 2k % 4 only takes 0 and 2: the hull [0, 3] is not reached at 3.
  CHECK_FALSE(env.of(bin(BinaryOp::kMod, bin(BinaryOp::kMul, k, i32(2)), i32(4))).exact);
  CHECK_FALSE(env.of(bin(BinaryOp::kAdd, k, tx)).exact);
  // Under `tx % 8 < 4`, tx + 4 never reaches 67.
  IntervalEnv guarded = env.narrowed(bin(BinaryOp::kLt, bin(BinaryOp::kMod, tx, i32(8)), i32(4)), true);
  Interval shifted = guarded.of(bin(BinaryOp::kAdd, tx, i32(4)));
  CHECK(shifted.to_string() == "[4, 67]");
  CHECK_FALSE(shifted.exceeds(0, 63));
  // A comparison with a constant keeps the variable exact.
  CHECK(env.narrowed(bin(BinaryOp::kLt, k, i32(4)), true).of(k).exceeds(0, 2));
}

}  // namespace tilert
