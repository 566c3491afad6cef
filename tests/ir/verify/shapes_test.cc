#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("shapes: copy moves equal shapes") {
  expect_one(R"(kernel k(A: f32[M, K], M: i32, K: i32) grid(1) threads(128) {
  shared As: f32[32, 128]
  copy A[0 +: 128, 0 +: 32] -> As
})",
             "copy-shape", 3, "source shape [128, 32] does not match destination shape [32, 128]");
}

TEST_CASE("shapes: index dimensions are dropped before comparing") {
  expect_clean(R"(kernel k(A: f32[M, K], M: i32, K: i32) grid(M) threads(128) {
  shared row: f32[128]
  shared two: f32[2, 128]
  copy A[bx, 0 +: 128] -> row
  copy row -> two[1]
  copy two[0, 0 +: 64] -> A[bx, 64 +: 64]
})");
}

TEST_CASE("shapes: a whole dimension needs a constant size") {
  expect_one(R"(kernel k(A: f32[N], N: i32) grid(1) threads(128) {
  shared S: f32[128]
  copy A -> S
})",
             "region-shape", 3, "dimension 0 of A is taken whole but its size is not a constant");
}

TEST_CASE("shapes: gemm dimensions agree, with transposes") {
  expect_one(R"(kernel k() grid(1) threads(128) {
  shared As: f32[64, 32]
  shared Bs: f32[64, 128]
  fragment acc: f32[64, 128]
  gemm As, Bs -> acc
})",
             "gemm-shape", 5, "a [64, 32] and b [64, 128] disagree on K: 32 vs 64");
  expect_clean(R"(kernel k() grid(1) threads(128) {
  shared As: f32[32, 64]
  shared Bs: f32[128, 32]
  fragment acc: f32[64, 128]
  gemm As, Bs -> acc transpose_a transpose_b
})");
  expect_one(R"(kernel k() grid(1) threads(128) {
  shared As: f32[64, 32]
  shared Bs: f32[32, 128]
  fragment acc: f32[128, 64]
  gemm As, Bs -> acc
})",
             "gemm-shape", 5, "c has shape [128, 64] but a @ b is [64, 128]");
  expect_one(R"(kernel k() grid(1) threads(128) {
  shared As: f32[2, 64, 32]
  shared Bs: f32[32, 128]
  fragment acc: f32[64, 128]
  gemm As, Bs -> acc
})",
             "gemm-shape", 5, "operand a (As) has shape [2, 64, 32]; gemm operands are 2-D");
}

TEST_CASE("shapes: reduce drops its dimension") {
  expect_one(R"(kernel k() grid(1) threads(128) {
  fragment x: f32[64, 128]
  fragment m: f32[128]
  reduce_max x -> m dim(1)
})",
             "reduce-shape", 4,
             "destination shape [128] does not match source shape [64, 128] without dimension 1 ([64])");
  expect_one(R"(kernel k() grid(1) threads(128) {
  fragment x: f32[64, 128]
  fragment m: f32[64]
  reduce_sum x -> m dim(2)
})",
             "reduce-dim", 4, "dim(2) is out of range for source shape [64, 128]");
  expect_clean(R"(kernel k() grid(1) threads(128) {
  fragment x: f32[64, 128]
  fragment m: f32[128]
  reduce_min x -> m dim(0) accumulate
})");
}

}  // namespace tilert::testing
