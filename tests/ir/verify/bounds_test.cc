#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("bounds: constant ranges stay inside tiles") {
  expect_one(R"(kernel k(A: f32[N], N: i32) grid(1) threads(128) {
  shared S: f32[128]
  copy A[0 +: 64] -> S[96 +: 64]
})",
             "index-bounds", 3, "range 96 +: 64 out of bounds of S (size 128)");
  expect_one(R"(kernel k(A: f32[N], N: i32) grid(1) threads(128) {
  shared S: f32[4, 32]
  copy A[0 +: 32] -> S[4]
})",
             "index-bounds", 3, "index 4 out of bounds of S (dimension 0, size 4)");
}

TEST_CASE("bounds: global tensors are checked at run time, not here") {
  expect_clean(R"(kernel k(A: f32[N], N: i32) grid(1) threads(128) {
  shared S: f32[64]
  copy A[100000 +: 64] -> S
  copy S -> A[-64 +: 64]
})");
}

TEST_CASE("bounds: loop variables, k % 2 and parallel variables are bounded") {
  expect_one(R"(kernel k(N: i32) grid(1) threads(32) {
  shared S: f32[2]
  serial k in 0 .. N {
    S[k % 2 + 1] = 0.0
  }
})",
             "index-bounds", 4, "index [1, 2] out of bounds of S (size 2)");
  expect_one(R"(kernel k() grid(1) threads(32) {
  shared S: f32[4]
  serial i in 0 .. 5 {
    S[i] = 0.0
  }
})",
             "index-bounds", 4, "index [0, 4] out of bounds of S (size 4)");
  expect_one(R"(kernel k() grid(1) threads(32) {
  fragment x: f32[64]
  parallel i in 0 .. 65 {
    x[i] = 0.0
  }
})",
             "index-bounds", 4, "index [0, 64] out of bounds of x (size 64)");
}

TEST_CASE("bounds: guards narrow ranges, and loops that never run are skipped") {
  expect_clean(R"(kernel k() grid(1) threads(32) {
  shared S: f32[4]
  serial i in 0 .. 8 {
    if i < 4 {
      S[i] = 0.0
    } else {
      S[i - 4] = 1.0
    }
  }
  serial j in 4 .. 4 {
    S[j] = 0.0
  }
})");
}

TEST_CASE("bounds: tx is bounded by the block, and by its role") {
  expect_one(R"(kernel k() grid(1) threads(32) {
  local b: f32[4]
  b[tx] = 0.0
})",
             "index-bounds", 3, "index [0, 31] out of bounds of b (size 4)");
  expect_clean(R"(kernel k() grid(1) threads(64) requires(roles) {
  shared S: f32[32]
  role first(threads: 32) {
    S[tx] = 1.0
  }
  role second(threads: 32) {
    S[tx - 32] = 2.0
  }
})");
}

TEST_CASE("bounds: unknown values are never reported") {
  expect_clean(R"(kernel k(N: i32) grid(1) threads(32) {
  shared S: f32[2]
  local s: i32
  s = N
  S[s % 2] = 0.0
  S[min(N, 1)] = 1.0
})");
}

}  // namespace tilert::testing
