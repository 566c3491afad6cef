#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("mbarriers: an index outside the array was never initialised") {
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier full[2](arrivals: 32)
  arrive full[1]
  wait full[2] parity(0)
})",
             "mbarrier-index", 4, "index 2 out of bounds of full (size 2): that mbarrier is never initialised");
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier full[2](arrivals: 32)
  serial k in 0 .. 8 {
    arrive full[k % 4]
    wait full[k % 2] parity(0)
  }
})",
             "mbarrier-index", 4, "index [0, 3] out of bounds of full (size 2)");
}

TEST_CASE("mbarriers: a wait that nothing arrives at") {
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier full(arrivals: 1)
  mbarrier empty(arrivals: 1)
  arrive empty
  wait full parity(0)
  wait full parity(1)
})",
             "mbarrier-never-arrived", 5, "wait on mbarrier full which no statement arrives at");
}

TEST_CASE("mbarriers: async copy completion and expect_tx count as arrivals") {
  expect_clean(R"(kernel k(A: f32[N], N: i32) grid(1) threads(32) requires(mbarrier, async_copy) {
  shared S: f32[64]
  mbarrier ready(arrivals: 1)
  mbarrier done(arrivals: 1)
  arrive_expect_tx ready bytes(256)
  copy_async A[0 +: 64] -> S complete(done)
  wait ready parity(0)
  wait done parity(0)
})");
}

TEST_CASE("mbarriers: arrival counts, expect_tx bytes and parities") {
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier b(arrivals: 0)
  arrive b
})",
             "mbarrier-arrivals", 2, "mbarrier b expects 0 arrivals per phase; it needs at least 1");
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier b(arrivals: 1)
  arrive_expect_tx b bytes(0)
})",
             "mbarrier-expect-tx", 3, "arrive_expect_tx on b announces 0 bytes");
  expect_one(R"(kernel k() grid(1) threads(32) requires(mbarrier) {
  mbarrier b(arrivals: 32)
  arrive b
  wait b parity(2)
})",
             "mbarrier-parity", 4, "parity 2 of wait on b must be 0 or 1");
}

}  // namespace tilert::testing
