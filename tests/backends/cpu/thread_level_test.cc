// Thread-level code: per-thread locals, divergent ifs and loops, atomics.
#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

TEST_CASE("if on tx splits the threads; locals hold one value per thread") {
  Kernel kernel = parse_kernel(R"(
kernel divergent(Out: i32[64], Tri: i32[64], Arr: i32[64]) grid(1) threads(64) {
  local v: i32
  local s: i32
  local r: i32[4]
  v = tx * 2
  if tx < 32 {
    v = v + 1000
  } else {
    v = -v
  }
  Out[tx] = v
  serial i in 0 .. tx {
    s = s + i
  }
  Tri[tx] = s
  serial j in 0 .. 4 {
    r[j] = tx + j
  }
  Arr[tx] = r[0] + r[3]
}
)");
  HostTensor out(DType::kI32, 64), tri(DType::kI32, 64), arr(DType::kI32, 64);
  std::vector<ArgValue> args = {out.arg(), tri.arg(), arr.arg()};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  for (int t = 0; t < 64; ++t) {
    CHECK(out.get(static_cast<size_t>(t)) == (t < 32 ? t * 2 + 1000 : -t * 2));
    CHECK(tri.get(static_cast<size_t>(t)) == t * (t - 1) / 2);
    CHECK(arr.get(static_cast<size_t>(t)) == 2 * t + 3);
  }
}

TEST_CASE("lockstep assignment: every thread reads before any thread writes") {
  Kernel kernel = parse_kernel(R"(
kernel shift(Out: f32[32]) grid(1) threads(32) {
  shared S: f32[33]
  S[tx] = f32(tx)
  barrier
  S[tx] = S[tx + 1]
  barrier
  Out[tx] = S[tx]
}
)");
  HostTensor out(DType::kF32, 32);
  std::vector<ArgValue> args = {out.arg()};
  REQUIRE(run_kernel(kernel, args).ok());
  for (int t = 0; t < 31; ++t) CHECK(out.get(static_cast<size_t>(t)) == t + 1);
  CHECK(out.get(31) == 0);  // S[32] was never written: tiles start at zero
}

TEST_CASE("atomic_add from every thread of every block") {
  Kernel kernel = parse_kernel(R"(
kernel count(Total: f32[1], Hist: i32[4]) grid(8) threads(32) {
  atomic_add Total[0], 0.5
  atomic_add Hist[(tx + bx) % 4], 1
}
)");
  HostTensor total(DType::kF32, 1), hist(DType::kI32, 4);
  std::vector<ArgValue> args = {total.arg(), hist.arg()};
  absl::Status status = run_kernel(kernel, args, {.num_threads = 4});
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  CHECK(total.get(0) == 128.0);
  for (size_t i = 0; i < 4; ++i) CHECK(hist.get(i) == 64);
}

TEST_CASE("a loop with thread-dependent bounds runs until no thread continues") {
  Kernel kernel = parse_kernel(R"(
kernel steps(Out: i32[8]) grid(1) threads(8) {
  local n: i32
  serial i in tx .. 2 * tx + 1 {
    n = n + 1
  }
  Out[tx] = n
}
)");
  HostTensor out(DType::kI32, 8);
  std::vector<ArgValue> args = {out.arg()};
  REQUIRE(run_kernel(kernel, args).ok());
  for (int t = 0; t < 8; ++t) CHECK(out.get(static_cast<size_t>(t)) == t + 1);
}

TEST_CASE("a local declared inside a parallel body is per iteration") {
  Kernel kernel = parse_kernel(R"(
kernel per_iteration(Out: f32[16]) grid(1) threads(4) {
  fragment acc: f32[16]
  parallel i in 0 .. 16 {
    local t: f32
    t = t + f32(i)
    acc[i] = t
  }
  copy acc -> Out
}
)");
  HostTensor out(DType::kF32, 16);
  std::vector<ArgValue> args = {out.arg()};
  REQUIRE(run_kernel(kernel, args).ok());
  for (int i = 0; i < 16; ++i) CHECK(out.get(static_cast<size_t>(i)) == i);
}

}  // namespace
}  // namespace tilert::cpu::testing
