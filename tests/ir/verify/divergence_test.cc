#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("divergence: block barrier under a condition on tx") {
  expect_one(R"(kernel k() grid(1) threads(128) {
  if tx < 32 {
    barrier
  }
})",
             "barrier-divergence", 3,
             "barrier inside control flow that depends on the thread index (if at line 2)");
}

TEST_CASE("divergence: collective tile ops under thread-dependent control flow") {
  expect_one(R"(kernel k(A: f32[N], N: i32) grid(1) threads(128) {
  shared S: f32[64]
  local warp: i32
  warp = tx / 32
  if warp == 0 {
    copy A[0 +: 64] -> S
  }
})",
             "collective-divergence", 6,
             "copy inside control flow that depends on the thread index (if at line 5)");
}

TEST_CASE("divergence: a flag set under a thread condition is per-thread") {
  expect_one(R"(kernel k() grid(1) threads(128) {
  local flag: i32
  flag = 0
  if tx < 4 {
    flag = 1
  }
  if flag == 1 {
    barrier
  }
})",
             "barrier-divergence", 8, "(if at line 7)");
}

TEST_CASE("divergence: taint found late in a loop body reaches earlier conditions") {
  expect_one(R"(kernel k() grid(1) threads(128) {
  local t: i32
  t = 0
  serial i in 0 .. 4 {
    if t > 0 {
      barrier
    }
    t = tx
  }
})",
             "barrier-divergence", 6, "(if at line 5)");
}

TEST_CASE("divergence: loop bounds on the thread index; named barriers and cluster_sync") {
  expect_one(R"(kernel k() grid(1) threads(128) requires(named_barrier) {
  serial i in 0 .. tx {
    named_barrier id(1) threads(128)
  }
})",
             "barrier-divergence", 3, "named_barrier inside control flow that depends on the thread index (serial at line 2)");
  expect_one(R"(kernel k() grid(1) threads(128) cluster(2) requires(cluster) {
  if tx == 0 {
    cluster_sync
  }
})",
             "barrier-divergence", 3, "cluster_sync inside");
}

TEST_CASE("divergence: uniform conditions, roles, subgroup barriers and elected mbarrier ops are fine") {
  expect_clean(R"(kernel k(A: f32[N], N: i32) grid(4) threads(256) requires(roles, subgroup, mbarrier) {
  shared S: f32[64]
  mbarrier b(arrivals: 1)
  if bx < 2 {
    copy A[bx * 64 +: 64] -> S
    barrier
  }
  serial i in 0 .. N {
    barrier
  }
  if tx < 32 {
    subgroup_barrier
  }
  role one(threads: 128) {
    barrier
    if tx == 0 {
      arrive b
    }
  }
  role two(threads: 128) {
    wait b parity(0)
    barrier
  }
})");
}

}  // namespace tilert::testing
