// Synchronization that works: mbarrier pipelines between roles, named barriers, cluster_sync.
#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

// A producer fills a 2-stage ring through async copies; a consumer sums the rows. Parities flip
// every second iteration, so N = 7 rows exercises several phases of every barrier.
constexpr const char* kPipeline = R"(
kernel ring_sum(A: f32[N, 64], Out: f32[64], N: i32) grid(1) threads(256) requires(mbarrier, roles, async_copy) {
  shared S: f32[2, 64]
  mbarrier full[2](arrivals: 1)
  mbarrier empty[2](arrivals: 128)
  role producer(threads: 128) {
    serial k in 0 .. N {
      wait empty[k % 2] parity((k / 2 + 1) % 2)
      arrive_expect_tx full[k % 2] bytes(256)
      copy_async A[k, 0 +: 64] -> S[k % 2] complete(full[k % 2])
    }
  }
  role consumer(threads: 128) {
    fragment acc: f32[64]
    clear acc
    serial k in 0 .. N {
      wait full[k % 2] parity((k / 2) % 2)
      parallel j in 0 .. 64 {
        acc[j] = acc[j] + S[k % 2, j]
      }
      arrive empty[k % 2]
    }
    copy acc -> Out
  }
}
)";

TEST_CASE("2-stage producer/consumer roles with mbarriers compute the right sum") {
  Kernel kernel = parse_kernel(kPipeline);
  const int64_t n = 7;
  HostTensor a(DType::kF32, n * 64), out(DType::kF32, 64);
  for (size_t i = 0; i < a.size(); ++i) a.set(i, static_cast<double>(i % 97));
  std::vector<ArgValue> args = {a.arg(), out.arg(), n};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  for (size_t j = 0; j < 64; ++j) {
    double sum = 0;
    for (size_t k = 0; k < n; ++k) sum += a.get(k * 64 + j);
    CHECK(out.get(j) == sum);
  }
}

TEST_CASE("named barrier orders a reader role after a writer role") {
  // The reader comes first, so it only sees the data because it waits at barrier 1.
  Kernel kernel = parse_kernel(R"(
kernel handoff(Out: f32[64]) grid(1) threads(128) {
  shared S: f32[64]
  role reader(threads: 64) {
    named_barrier id(1) threads(128)
    copy S -> Out
  }
  role writer(threads: 64) {
    parallel i in 0 .. 64 {
      S[i] = f32(i) * 2.0
    }
    named_arrive id(1) threads(128)
  }
}
)");
  HostTensor out(DType::kF32, 64);
  std::vector<ArgValue> args = {out.arg()};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  for (size_t i = 0; i < 64; ++i) CHECK(out.get(i) == 2.0 * static_cast<double>(i));
}

TEST_CASE("block barrier counts the threads of every role") {
  Kernel kernel = parse_kernel(R"(
kernel meet(Out: i32[2]) grid(1) threads(96) {
  shared S: i32[2]
  role a(threads: 32) {
    barrier
    Out[0] = S[1]
  }
  role b(threads: 64) {
    S[1] = 42
    barrier
  }
}
)");
  HostTensor out(DType::kI32, 2);
  std::vector<ArgValue> args = {out.arg()};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  CHECK(out.get(0) == 42);
}

TEST_CASE("cluster_sync across a cluster of 2 blocks") {
  Kernel kernel = parse_kernel(R"(
kernel exchange(G: i32[2], Out: i32[2]) grid(2) threads(32) cluster(2) {
  if tx == 0 {
    G[bx] = bx + 10
  }
  cluster_sync
  if tx == 0 {
    Out[bx] = G[1 - bx]
  }
}
)");
  HostTensor g(DType::kI32, 2), out(DType::kI32, 2);
  std::vector<ArgValue> args = {g.arg(), out.arg()};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  CHECK(out.get(0) == 11);
  CHECK(out.get(1) == 10);
}

}  // namespace
}  // namespace tilert::cpu::testing
