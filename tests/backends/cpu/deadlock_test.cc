// Deadlocks are reported at once, naming every waiting role and its barrier; nothing hangs.
#include <chrono>

#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

absl::Status run_timed(const Kernel& kernel, std::vector<ArgValue> args, double* seconds) {
  auto start = std::chrono::steady_clock::now();
  absl::Status status = run_kernel(kernel, args);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return status;
}

TEST_CASE("warp-specialized kernel with a wrong parity: Aborted, naming both roles") {
  // The producer waits on parity 0 of a fresh `empty` barrier (it should wait on parity 1).
  Kernel kernel = parse_kernel(R"(
kernel wrong_parity(A: f32[4, 64], Out: f32[64]) grid(1) threads(256) {
  shared S: f32[2, 64]
  mbarrier full[2](arrivals: 1)
  mbarrier empty[2](arrivals: 128)
  role producer(threads: 128) {
    serial k in 0 .. 4 {
      wait empty[k % 2] parity((k / 2) % 2)
      arrive_expect_tx full[k % 2] bytes(256)
      copy_async A[k, 0 +: 64] -> S[k % 2] complete(full[k % 2])
    }
  }
  role consumer(threads: 128) {
    serial k in 0 .. 4 {
      wait full[k % 2] parity((k / 2) % 2)
      arrive empty[k % 2]
    }
    copy S[0] -> Out
  }
}
)");
  HostTensor a(DType::kF32, 256), out(DType::kF32, 64);
  double seconds = 0;
  absl::Status status = run_timed(kernel, {a.arg(), out.arg()}, &seconds);
  CHECK(seconds < 1.0);
  CHECK(status.code() == absl::StatusCode::kAborted);
  std::string message(status.message());
  CHECK_MESSAGE(message.find("deadlock in kernel wrong_parity block (0,0,0): ") == 0, message);
  CHECK_MESSAGE(message.find("role producer (threads 0..127) waits on mbarrier empty[0] parity 0 at line 8 "
                             "(phase 0: 0 of 128 arrivals, 0 bytes pending)") != std::string::npos,
                message);
  CHECK_MESSAGE(message.find("role consumer (threads 128..255) waits on mbarrier full[0] parity 0 at line 15 "
                             "(phase 0: 0 of 1 arrivals, 0 bytes pending)") != std::string::npos,
                message);
}

TEST_CASE("waiting on an mbarrier nobody arrives at") {
  Kernel kernel = parse_kernel(R"(
kernel lonely(Out: f32[1]) grid(2) threads(32) {
  mbarrier ready(arrivals: 1)
  wait ready parity(0)
  Out[0] = 1.0
}
)");
  HostTensor out(DType::kF32, 1);
  double seconds = 0;
  absl::Status status = run_timed(kernel, {out.arg()}, &seconds);
  CHECK(seconds < 1.0);
  CHECK(status.code() == absl::StatusCode::kAborted);
  CHECK_MESSAGE(std::string(status.message()).find("threads 0..31 waits on mbarrier ready[0] parity 0 at line 4 "
                                                   "(phase 0: 0 of 1 arrivals, 0 bytes pending)") != std::string::npos,
                status.message());
  CHECK(out.get(0) == 0.0);
}

TEST_CASE("a barrier under thread-dependent control flow never completes") {
  Kernel kernel = parse_kernel(R"(
kernel half(Out: f32[1]) grid(1) threads(64) {
  if tx < 32 {
    barrier
  }
}
)");
  HostTensor out(DType::kF32, 1);
  double seconds = 0;
  absl::Status status = run_timed(kernel, {out.arg()}, &seconds);
  CHECK(seconds < 1.0);
  CHECK(status.code() == absl::StatusCode::kAborted);
  CHECK_MESSAGE(std::string(status.message()) ==
                    "deadlock in kernel half block (0,0,0): threads 0..63 waits on barrier at line 4 "
                    "(32 of 64 threads arrived)",
                status.message());
}

TEST_CASE("cluster_sync reached by only one block of the cluster") {
  Kernel kernel = parse_kernel(R"(
kernel uneven(Out: f32[1]) grid(4) threads(32) cluster(2) {
  if bx % 2 == 0 {
    cluster_sync
  }
}
)");
  HostTensor out(DType::kF32, 1);
  double seconds = 0;
  absl::Status status = run_timed(kernel, {out.arg()}, &seconds);
  CHECK(seconds < 1.0);
  CHECK(status.code() == absl::StatusCode::kAborted);
  std::string message(status.message());
  CHECK_MESSAGE(message.find("deadlock in kernel uneven cluster of blocks (") == 0, message);
  CHECK_MESSAGE(message.find("threads 0..31 waits on cluster_sync at line 4 (32 of 64 threads arrived)") !=
                    std::string::npos,
                message);
}

TEST_CASE("roles waiting at different named barriers: the deadlock comes before any watchdog") {
  Kernel kernel = parse_kernel(R"(
kernel stuck(Out: f32[1]) grid(1) threads(64) {
  role a(threads: 32) {
    named_barrier id(2) threads(64)
  }
  role b(threads: 32) {
    named_barrier id(3) threads(64)
  }
}
)");
  HostTensor out(DType::kF32, 1);
  std::vector<ArgValue> args = {out.arg()};
  absl::Status status = run_kernel(kernel, args, {.watchdog_ms = 50});
  CHECK(status.code() == absl::StatusCode::kAborted);
  std::string message(status.message());
  CHECK_MESSAGE(message.find("role a (threads 0..31) waits on named barrier 2 at line 4 (32 of 64 threads arrived)") !=
                    std::string::npos,
                message);
  CHECK_MESSAGE(message.find("role b (threads 32..63) waits on named barrier 3 at line 7 (32 of 64 threads arrived)") !=
                    std::string::npos,
                message);
}

}  // namespace
}  // namespace tilert::cpu::testing
