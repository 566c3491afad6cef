#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("structure: tile op regions name tensors, shared or fragment tiles") {
  expect_one(R"(kernel k(A: f32[64]) grid(1) threads(32) {
  local t: f32[64]
  copy A -> t
})",
             "operand-kind", 3, "copy operand t is a local");
}

TEST_CASE("structure: gemm accumulates into a fragment") {
  expect_one(R"(kernel k() grid(1) threads(128) {
  shared As: f32[16, 16]
  shared Bs: f32[16, 16]
  shared Cs: f32[16, 16]
  gemm As, Bs -> Cs
})",
             "operand-kind", 5, "gemm accumulator Cs is a shared tile; it must be a fragment tile");
}

TEST_CASE("structure: a region has no more ranges than its buffer has dimensions") {
  expect_one(R"(kernel k(A: f32[64]) grid(1) threads(32) {
  shared S: f32[32]
  copy A[0 +: 32, 0 +: 1] -> S
})",
             "region-rank", 3, "2 ranges for A, which has 1 dimensions");
}

TEST_CASE("structure: assignments never write parameters' scalars or loop variables") {
  expect_one(R"(kernel k(N: i32) grid(1) threads(32) {
  N = 3
})",
             "assign-target", 2, "cannot assign to N, a scalar parameter");
  expect_one(R"(kernel k() grid(1) threads(32) {
  serial i in 0 .. 4 {
    i = 2
  }
})",
             "assign-target", 3, "cannot assign to i, a loop variable");
}

TEST_CASE("structure: mbarrier operations take mbarriers, and only mbarriers are barriers") {
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  shared S: f32[32]
  wait S parity(0)
})",
             "mbarrier-operand", 3, "wait on S, which is a shared tile, not an mbarrier");
  expect_one(R"(kernel k(A: f32[32]) grid(1) threads(32) requires(async_copy) {
  shared S: f32[32]
  shared T: f32[32]
  copy_async A -> S complete(T)
})",
             "mbarrier-operand", 4, "copy_async on T, which is a shared tile, not an mbarrier");
}

TEST_CASE("structure: element accesses use one index per dimension") {
  expect_one(R"(kernel k() grid(1) threads(32) {
  shared S: f32[4, 4]
  S[1] = 0.0
})",
             "index-rank", 3, "S has 2 dimensions but is indexed with 1");
}

TEST_CASE("structure: atomic_add targets a tensor or a shared tile") {
  expect_one(R"(kernel k() grid(1) threads(32) requires(atomic) {
  local t: f32[4]
  atomic_add t[0], 1.0
})",
             "operand-kind", 3, "atomic_add targets a tensor or a shared tile");
}

TEST_CASE("structure: a malformed kernel stops after structure") {
  // The copy is also mis-shaped, but structure failed first: only its diagnostic is reported.
  auto diagnostics = verify_text(R"(kernel k(A: f32[64]) grid(1) threads(32) {
  local t: f32[8]
  copy A -> t
})");
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].rule == "operand-kind");
}

}  // namespace tilert::testing
