#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("capabilities: mbarrier use without requires(mbarrier)") {
  Diagnostic d = expect_one(R"(kernel k() grid(1) threads(32) {
  mbarrier b(arrivals: 32)
  arrive b
  wait b parity(0)
})",
                            "capability", 2,
                            "uses mbarrier (mbarrier b at line 2) but does not declare it in requires(...)");
  CHECK(d.op == "declare");
}

TEST_CASE("capabilities: dtypes of parameters, tiles and values") {
  Diagnostic d = expect_one(R"(kernel k(A: f16[N], N: i32) grid(1) threads(32) {
})",
                            "capability", 1, "uses f16 (parameter A at line 1)");
  CHECK(d.op.empty());
  expect_one(R"(kernel k() grid(1) threads(32) {
  shared S: bf16[32]
})",
             "capability", 2, "uses bf16 (shared S at line 2)");
  expect_one(R"(kernel k() grid(1) threads(32) {
  local x: f32
  x = f32(f64(1.0) * 2.0)
})",
             "capability", 3, "uses f64 (a f64 value in assign at line 3)");
}

TEST_CASE("capabilities: each op's capability, reported once at its first use") {
  expect_one(R"(kernel k(A: f32[N], N: i32) grid(1) threads(32) {
  atomic_add A[0], 1.0
  atomic_add A[1], 1.0
})",
             "capability", 2, "uses atomic (atomic_add at line 2)");
  expect_one(R"(kernel k() grid(1) threads(32) {
  subgroup_barrier
})",
             "capability", 2, "uses subgroup (subgroup_barrier at line 2)");
  expect_one(R"(kernel k() grid(1) threads(32) requires(roles) {
  named_arrive id(1) threads(32)
})",
             "capability", 2, "uses named_barrier (named_arrive at line 2)");
  expect_one(R"(kernel k() grid(1) threads(32) {
  role only(threads: 32) {
  }
})",
             "capability", 2, "uses roles (role at line 2)");
  expect_one(R"(kernel k(A: f32[N], N: i32) grid(1) threads(32) requires(mbarrier) {
  shared S: f32[32]
  mbarrier b(arrivals: 1)
  copy_async A[0 +: 32] -> S complete(b)
  wait b parity(0)
})",
             "capability", 4, "uses async_copy (copy_async at line 4)");
}

TEST_CASE("capabilities: a cluster shape needs requires(cluster)") {
  Diagnostic d = expect_one(R"(kernel k() grid(2) threads(32) cluster(2) {
  cluster_sync
})",
                            "capability", 1, "uses cluster (cluster(...) in the kernel header)");
  CHECK(d.op.empty());
}

}  // namespace tilert::testing
