// Tile ops of the CPU reference against naive host loops.
#include <cmath>

#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

constexpr const char* kGemm = R"(
kernel gemm(A: f16[M, K], B: f16[K, N], C: f32[M, N], M: i32, N: i32, K: i32)
    grid(ceildiv(N, 32), ceildiv(M, 32)) threads(64) {
  shared As: f16[32, 16]
  shared Bs: f16[16, 32]
  fragment acc: f32[32, 32]
  clear acc
  pipelined k in 0 .. ceildiv(K, 16) stages(2) {
    copy A[by * 32 +: 32, k * 16 +: 16] -> As
    copy B[k * 16 +: 16, bx * 32 +: 32] -> Bs
    gemm As, Bs -> acc
  }
  copy acc -> C[by * 32 +: 32, bx * 32 +: 32]
}
)";

// A stored as [K, M] and B as [N, K]: the same product through both transposes.
constexpr const char* kGemmTransposed = R"(
kernel gemm_t(A: f16[K, M], B: f16[N, K], C: f32[M, N], M: i32, N: i32, K: i32)
    grid(ceildiv(N, 32), ceildiv(M, 32)) threads(64) {
  shared As: f16[16, 32]
  shared Bs: f16[32, 16]
  fragment acc: f32[32, 32]
  clear acc
  serial k in 0 .. ceildiv(K, 16) {
    copy A[k * 16 +: 16, by * 32 +: 32] -> As
    copy B[bx * 32 +: 32, k * 16 +: 16] -> Bs
    gemm As, Bs -> acc transpose_a transpose_b
  }
  copy acc -> C[by * 32 +: 32, bx * 32 +: 32]
}
)";

struct GemmCase {
  int64_t m, n, k;
  bool transposed;
};

void check_gemm(const GemmCase& c) {
  Kernel kernel = parse_kernel(c.transposed ? kGemmTransposed : kGemm);
  HostTensor a(DType::kF16, c.m * c.k), b(DType::kF16, c.k * c.n), out(DType::kF32, c.m * c.n);
  // Logical a[i][p] and b[p][j]; stored transposed where the kernel expects it.
  auto a_at = [&](int64_t i, int64_t p) { return static_cast<size_t>(c.transposed ? p * c.m + i : i * c.k + p); };
  auto b_at = [&](int64_t p, int64_t j) { return static_cast<size_t>(c.transposed ? j * c.k + p : p * c.n + j); };
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t p = 0; p < c.k; ++p) a.set(a_at(i, p), pseudo_random(static_cast<uint64_t>(i * 1000 + p)));
  for (int64_t p = 0; p < c.k; ++p)
    for (int64_t j = 0; j < c.n; ++j) b.set(b_at(p, j), pseudo_random(static_cast<uint64_t>(777777 + p * 1000 + j)));
  std::vector<ArgValue> args = {a.arg(), b.arg(), out.arg(), int64_t{c.m}, int64_t{c.n}, int64_t{c.k}};
  absl::Status status = run_kernel(kernel, args, {.num_threads = 2});
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  double worst = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < c.k; ++p) ref += a.get(a_at(i, p)) * b.get(b_at(p, j));
      worst = std::max(worst, std::fabs(out.get(static_cast<size_t>(i * c.n + j)) - ref));
    }
  // f16 inputs are exact in double; only the f32 rounding of the accumulator after each k-step differs.
  CHECK(worst < 1e-5);
}

TEST_CASE("gemm: f16 in, f32 accumulate, ragged sizes through bounds-checked copies") {
  check_gemm({45, 37, 50, false});
  check_gemm({32, 32, 16, false});
}

TEST_CASE("gemm: transpose_a and transpose_b") { check_gemm({40, 33, 47, true}); }

TEST_CASE("row softmax") {
  Kernel kernel = parse_kernel(R"(
kernel softmax(X: f32[R, 64], Y: f32[R, 64], R: i32) grid(ceildiv(R, 16)) threads(32) {
  fragment x: f32[16, 64]
  fragment m: f32[16]
  fragment s: f32[16]
  copy X[bx * 16 +: 16, 0 +: 64] -> x
  reduce_max x -> m dim(1)
  parallel i, j in 0 .. 16, 0 .. 64 {
    x[i, j] = exp(x[i, j] - m[i])
  }
  reduce_sum x -> s dim(1)
  parallel i, j in 0 .. 16, 0 .. 64 {
    x[i, j] = x[i, j] / s[i]
  }
  copy x -> Y[bx * 16 +: 16, 0 +: 64]
}
)");
  const int64_t rows = 21;
  HostTensor x(DType::kF32, rows * 64), y(DType::kF32, rows * 64);
  for (size_t i = 0; i < x.size(); ++i) x.set(i, 4 * pseudo_random(i));
  std::vector<ArgValue> args = {x.arg(), y.arg(), int64_t{rows}};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < 64; ++j) mx = std::max(mx, x.get(static_cast<size_t>(r * 64 + j)));
    for (int64_t j = 0; j < 64; ++j) sum += std::exp(x.get(static_cast<size_t>(r * 64 + j)) - mx);
    for (int64_t j = 0; j < 64; ++j) {
      double ref = std::exp(x.get(static_cast<size_t>(r * 64 + j)) - mx) / sum;
      CHECK(std::fabs(y.get(static_cast<size_t>(r * 64 + j)) - ref) < 1e-6);
    }
  }
}

TEST_CASE("reductions: sum, max, min over either dim; accumulate combines the old value") {
  Kernel kernel = parse_kernel(R"(
kernel reduce(X: f32[4, 8], Out: f32[5, 8]) grid(1) threads(32) {
  fragment x: f32[4, 8]
  fragment cols: f32[8]
  fragment rows: f32[4]
  copy X -> x
  reduce_sum x -> cols dim(0)
  copy cols -> Out[0, 0 +: 8]
  reduce_max x -> rows dim(1)
  copy rows -> Out[1, 0 +: 4]
  reduce_min x -> rows dim(1)
  copy rows -> Out[2, 0 +: 4]
  fill cols, 100.0
  reduce_sum x -> cols dim(0) accumulate
  copy cols -> Out[3, 0 +: 8]
  fill rows, 0.5
  reduce_max x -> rows dim(1) accumulate
  copy rows -> Out[4, 0 +: 4]
}
)");
  HostTensor x(DType::kF32, 32), out(DType::kF32, 40);
  for (size_t i = 0; i < 32; ++i) x.set(i, static_cast<double>((static_cast<int>(i) * 7) % 11) - 5.0);
  std::vector<ArgValue> args = {x.arg(), out.arg()};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  auto at = [&](int r, int c) { return x.get(static_cast<size_t>(r * 8 + c)); };
  for (int c = 0; c < 8; ++c) {
    double sum = at(0, c) + at(1, c) + at(2, c) + at(3, c);
    CHECK(out.get(static_cast<size_t>(c)) == sum);
    CHECK(out.get(static_cast<size_t>(24 + c)) == sum + 100.0);
  }
  for (int r = 0; r < 4; ++r) {
    double mx = at(r, 0), mn = at(r, 0);
    for (int c = 1; c < 8; ++c) {
      mx = std::max(mx, at(r, c));
      mn = std::min(mn, at(r, c));
    }
    CHECK(out.get(static_cast<size_t>(8 + r)) == mx);
    CHECK(out.get(static_cast<size_t>(16 + r)) == mn);
    CHECK(out.get(static_cast<size_t>(32 + r)) == std::max(mx, 0.5));
  }
}

TEST_CASE("elementwise math, conversions and integer semantics") {
  Kernel kernel = parse_kernel(R"(
kernel math(X: f32[8], Y: f32[8, 8], I: i32[6]) grid(1) threads(1) {
  fragment x: f32[8]
  copy X -> x
  parallel i in 0 .. 8 {
    Y[0, i] = exp2(x[i])
    Y[1, i] = log(x[i] + 2.0)
    Y[2, i] = rsqrt(x[i] + 2.0)
    Y[3, i] = tanh(x[i])
    Y[4, i] = select(x[i] > 0.0, x[i], 0.0)
    Y[5, i] = f32(f16(x[i] * 3.14159))
    Y[6, i] = max(x[i], -0.25) + min(x[i], 0.25)
    Y[7, i] = floor(x[i] * 4.0) + abs(x[i])
  }
  I[0] = -7 / 2
  I[1] = -7 % 2
  I[2] = 2147483647 + 1
  I[3] = i32(-2.9)
  I[4] = ceildiv(129, 64)
  I[5] = (1 << 31) >> 31
}
)");
  HostTensor x(DType::kF32, 8), y(DType::kF32, 64), ints(DType::kI32, 6);
  for (size_t i = 0; i < 8; ++i) x.set(i, round_to_dtype(pseudo_random(i) * 1.5, DType::kF32));
  std::vector<ArgValue> args = {x.arg(), y.arg(), ints.arg()};
  absl::Status status = run_kernel(kernel, args);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  for (size_t i = 0; i < 8; ++i) {
    double v = x.get(i);
    auto f32 = [](double d) { return round_to_dtype(d, DType::kF32); };
    CHECK(y.get(0 * 8 + i) == f32(std::exp2(v)));
    CHECK(y.get(1 * 8 + i) == f32(std::log(v + 2.0)));
    CHECK(y.get(2 * 8 + i) == f32(1.0 / std::sqrt(v + 2.0)));
    CHECK(y.get(3 * 8 + i) == f32(std::tanh(v)));
    CHECK(y.get(4 * 8 + i) == (v > 0 ? v : 0.0));
    // The literal is an f32, the product is computed in double and converted to f16 exactly once.
    CHECK(y.get(5 * 8 + i) == round_to_dtype(v * f32(3.14159), DType::kF16));
    CHECK(y.get(6 * 8 + i) == f32(std::max(v, -0.25) + std::min(v, 0.25)));
    CHECK(y.get(7 * 8 + i) == f32(std::floor(v * 4.0) + std::fabs(v)));
  }
  CHECK(ints.get(0) == -3);
  CHECK(ints.get(1) == -1);
  CHECK(ints.get(2) == -2147483648.0);
  CHECK(ints.get(3) == -2);
  CHECK(ints.get(4) == 3);
  CHECK(ints.get(5) == -1);
}

TEST_CASE("kFloat64 and kExact agree within the tolerance of the output dtype") {
  Kernel kernel = parse_kernel(R"(
kernel mm(A: f16[64, 64], B: f16[64, 64], C: f16[64, 64]) grid(1) threads(128) {
  shared As: f16[64, 64]
  shared Bs: f16[64, 64]
  fragment acc: f32[64, 64]
  copy A -> As
  copy B -> Bs
  clear acc
  gemm As, Bs -> acc
  parallel i, j in 0 .. 64, 0 .. 64 {
    acc[i, j] = acc[i, j] * 0.1 + exp(acc[i, j] * 0.01)
  }
  copy acc -> C
}
)");
  HostTensor a(DType::kF16, 4096), b(DType::kF16, 4096), c(DType::kF16, 4096);
  HostTensor a64(DType::kF64, 4096), b64(DType::kF64, 4096), c64(DType::kF64, 4096);
  for (size_t i = 0; i < 4096; ++i) {
    a.set(i, pseudo_random(i));
    b.set(i, pseudo_random(i + 5000));
    a64.set(i, a.get(i));
    b64.set(i, b.get(i));
  }
  std::vector<ArgValue> exact_args = {a.arg(), b.arg(), c.arg()};
  std::vector<ArgValue> f64_args = {a64.arg(), b64.arg(), c64.arg()};
  REQUIRE(run_kernel(kernel, exact_args).ok());
  REQUIRE(run_kernel(kernel, f64_args, {.precision = Precision::kFloat64}).ok());
  Tolerance tol = tolerance_for(DType::kF16, 64);
  int differing = 0;
  for (size_t i = 0; i < 4096; ++i) {
    double ref = c64.get(i), got = c.get(i);
    CHECK(std::fabs(got - ref) <= tol.abs + tol.rel * std::fabs(ref));
    differing += got != ref;
  }
  CHECK(differing > 0);  // kFloat64 really skipped the f16 rounding
}

}  // namespace
}  // namespace tilert::cpu::testing
