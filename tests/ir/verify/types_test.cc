#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("types: indices are integers") {
  expect_one(R"(kernel k() grid(1) threads(32) {
  shared S: f32[4]
  S[1.5] = 0.0
})",
             "index-type", 3, "index 0 of S has type f32; it must be an integer");
  expect_one(R"(kernel k(A: f32[64]) grid(1) threads(32) {
  shared S: f32[32]
  copy A[0.5 +: 32] -> S
})",
             "index-type", 3, "start of dimension 0 of A has type f32");
}

TEST_CASE("types: loop bounds are integers") {
  expect_one(R"(kernel k() grid(1) threads(32) {
  serial i in 0 .. 2.0 {
  }
})",
             "loop-bound-type", 2, "loop end has type f32");
}

TEST_CASE("types: conditions are bool or integer") {
  expect_one(R"(kernel k(x: f32) grid(1) threads(32) {
  if x {
  }
})",
             "condition-type", 2, "condition has type f32; it must be bool or an integer");
  expect_clean(R"(kernel k(n: i32) grid(1) threads(32) {
  if n {
  }
  if n > 2 && true {
  }
})");
}

TEST_CASE("types: gemm takes a and b of one dtype and accumulates in f32 or that dtype") {
  expect_one(R"(kernel k() grid(1) threads(128) requires(f16, bf16) {
  shared As: f16[16, 16]
  shared Bs: bf16[16, 16]
  fragment acc: f32[16, 16]
  gemm As, Bs -> acc
})",
             "gemm-dtype", 5, "a is f16 and b is bf16; they must share one of f16, bf16, f32, i8");
  expect_one(R"(kernel k() grid(1) threads(128) requires(f16) {
  shared As: f32[16, 16]
  shared Bs: f32[16, 16]
  fragment acc: f16[16, 16]
  gemm As, Bs -> acc
})",
             "gemm-dtype", 5, "accumulator c is f16 for f32 inputs; it must be f32");
  expect_clean(R"(kernel k() grid(1) threads(128) requires(f16) {
  shared As: f16[16, 16]
  shared Bs: f16[16, 16]
  fragment acc: f16[16, 16]
  gemm As, Bs -> acc
})");
}

TEST_CASE("types: barrier operands are integers") {
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier b(arrivals: 32)
  arrive b
  wait b parity(0.0)
})",
             "operand-type", 4, "parity has type f32; it must be an integer");
}

}  // namespace tilert::testing
