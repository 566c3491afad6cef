#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("parallel: bodies hold only assignments, ifs and local declarations") {
  expect_one(R"(kernel k() grid(1) threads(64) {
  fragment x: f32[64]
  parallel i in 0 .. 64 {
    local t: f32
    t = x[i]
    if i > 3 {
      x[i] = t
    }
    barrier
  }
})",
             "parallel-body", 9, "barrier inside the body of parallel at line 3");
}

TEST_CASE("parallel: tx is not used in a parallel body") {
  expect_one(R"(kernel k() grid(1) threads(64) {
  fragment x: f32[64]
  parallel i in 0 .. 64 {
    x[i] = f32(tx)
  }
})",
             "parallel-thread-index", 4, "tx used inside the body of parallel at line 3");
}

TEST_CASE("parallel: fragment elements are accessed only inside parallel bodies") {
  expect_one(R"(kernel k() grid(1) threads(64) {
  fragment x: f32[64]
  shared s: f32[64]
  s[0] = x[0]
})",
             "fragment-access", 4, "read of an element of fragment x outside a parallel body");
  expect_one(R"(kernel k() grid(1) threads(64) {
  fragment x: f32[64]
  x[3] = 1.0
})",
             "fragment-access", 3, "write to an element of fragment x");
  // Tile ops take fragments whole.
  expect_clean(R"(kernel k() grid(1) threads(64) {
  fragment x: f32[64]
  shared s: f32[64]
  clear x
  copy x -> s
})");
}

}  // namespace tilert::testing
