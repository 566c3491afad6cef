// Errors name the kernel, line and op; faults are OutOfRange, bad arguments InvalidArgument; nothing crashes.
#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

std::string run_error(const std::string& source, std::vector<ArgValue> args) {
  Kernel kernel = parse_kernel(source);
  absl::Status status = run_kernel(kernel, args);
  CHECK(status.code() == absl::StatusCode::kOutOfRange);
  return std::string(status.message());
}

TEST_CASE("out-of-bounds tile regions and element accesses are errors") {
  HostTensor a(DType::kF32, 256 * 4);
  std::string message = run_error(R"(
kernel oob(A: f32[256, 4]) grid(1) threads(32) {
  shared As: f32[128, 4]
  copy A[0 +: 128, 0 +: 4] -> As
  copy A[0 +: 8, 0 +: 4] -> As[3 +: 8, 0 +: 4]
  copy As[127 +: 4, 0 +: 4] -> A[0 +: 4, 0 +: 4]
}
)", {a.arg()});
  CHECK(message == "kernel oob line 6: copy: index 130 out of bounds of As dimension 0 (size 128)");

  message = run_error(R"(
kernel load(A: f32[16]) grid(1) threads(32) {
  A[tx] = A[tx + 1]
}
)", {HostTensor(DType::kF32, 16).arg()});
  CHECK(message == "kernel load line 3: assign: index 16 out of bounds of A dimension 0 (size 16)");

  message = run_error(R"(
kernel local_oob(A: f32[16]) grid(1) threads(4) {
  local r: f32[2]
  r[tx] = 1.0
}
)", {HostTensor(DType::kF32, 16).arg()});
  CHECK(message == "kernel local_oob line 4: assign: index 2 out of bounds of r dimension 0 (size 2)");
}

TEST_CASE("global copies read zeros outside the tensor and do not write there") {
  Kernel kernel = parse_kernel(R"(
kernel edge(A: f32[N], B: f32[N], N: i32) grid(1) threads(32) {
  fragment t: f32[8]
  fill t, 5.0
  copy A[4 +: 8] -> t
  parallel i in 0 .. 8 {
    t[i] = t[i] + 1.0
  }
  copy t -> B[4 +: 8]
}
)");
  HostTensor a(DType::kF32, 6), b(DType::kF32, 6);
  for (size_t i = 0; i < 6; ++i) a.set(i, 10.0 + static_cast<double>(i));
  std::vector<ArgValue> args = {a.arg(), b.arg(), int64_t{6}};
  REQUIRE(run_kernel(kernel, args).ok());
  CHECK(b.get(3) == 0.0);
  CHECK(b.get(4) == 15.0);
  CHECK(b.get(5) == 16.0);
}

TEST_CASE("arguments are checked against the signature") {
  Kernel kernel = parse_kernel(R"(
kernel args(A: f32[N, 4], N: i32) grid(1) threads(32) {
  A[0, 0] = 1.0
}
)");
  HostTensor small(DType::kF32, 10);
  std::vector<ArgValue> args = {small.arg(), int64_t{3}};
  absl::Status status = run_kernel(kernel, args);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()) ==
        "kernel args: argument 0 (A) holds 40 bytes; its shape needs 48 (12 x f32)");
  std::vector<ArgValue> too_few = {small.arg()};
  CHECK(std::string(run_kernel(kernel, too_few).message()) == "kernel args: expects 2 arguments, got 1");
  std::vector<ArgValue> swapped = {int64_t{3}, small.arg()};
  CHECK(std::string(run_kernel(kernel, swapped).message()).find("argument 1 (N) is a scalar, got a tensor") !=
        std::string::npos);
}

TEST_CASE("protocol and structure errors") {
  HostTensor out(DType::kF32, 64);
  CHECK(run_error(R"(
kernel parity(Out: f32[64]) grid(1) threads(32) {
  mbarrier b(arrivals: 1)
  wait b parity(2)
}
)", {out.arg()}) == "kernel parity line 4: wait: parity 2 is neither 0 nor 1");
  CHECK(run_error(R"(
kernel under_if(Out: f32[64]) grid(1) threads(32) {
  fragment t: f32[64]
  if tx < 16 {
    copy t -> Out
  }
}
)", {out.arg()}) == "kernel under_if line 5: copy: collective op under thread-dependent control flow "
                   "(16 of 32 threads active)");
  CHECK(run_error(R"(
kernel too_many(Out: f32[64]) grid(1) threads(32) {
  role a(threads: 32) {
    barrier
  }
  role b(threads: 32) {
    barrier
  }
}
)", {out.arg()}) == "kernel too_many line 3: role: roles need 64 threads but the group has 32");
  CHECK(run_error(R"(
kernel divide(Out: f32[64], Z: i32) grid(1) threads(1) {
  Out[0] = f32(7 / Z)
}
)", {out.arg(), int64_t{0}}) == "kernel divide line 3: assign: integer / by zero (or overflowing)");
}

}  // namespace
}  // namespace tilert::cpu::testing
