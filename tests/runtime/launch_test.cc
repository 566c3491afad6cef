// Launches through the C API: a kernel end to end, every class of argument mismatch (each naming
// the argument), buffer bounds, and execution errors kept by the stream.
#include <cmath>
#include <string>
#include <vector>

#include "tests/runtime/runtime_test_util.h"

namespace tilert_test {
namespace {

constexpr const char* kGemm = R"(
kernel gemm(A: f16[M, K], B: f16[K, N], C: f16[M, N], M: i32, N: i32, K: i32)
    grid(ceildiv(N, 64), ceildiv(M, 64)) threads(128) requires(f16) {
  shared As: f16[64, 32]
  shared Bs: f16[32, 64]
  fragment acc: f32[64, 64]
  clear acc
  serial k in 0 .. ceildiv(K, 32) {
    copy A[by * 64 +: 64, k * 32 +: 32] -> As
    copy B[k * 32 +: 32, bx * 64 +: 64] -> Bs
    gemm As, Bs -> acc
  }
  copy acc -> C[by * 64 +: 64, bx * 64 +: 64]
}
)";

TEST_CASE("scale_add runs end to end through the C API") {
  CpuFixture f;
  tilert_kernel kernel = f.load_kernel(read_text_file(kScaleAddPath), "scale_add");
  const int64_t n = 1000;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i) * 0.25f;
    y[i] = 1.0f - static_cast<float>(i);
  }
  tilert_buffer xb = f.buffer(n * 4, x.data()), yb = f.buffer(n * 4, y.data());
  tilert_arg args[] = {tilert_arg_tensor(xb, TILERT_F32, 1, &n),
                       tilert_arg_tensor(yb, TILERT_F32, 1, &n), tilert_arg_float(3.0),
                       tilert_arg_int(n)};
  REQUIRE_MESSAGE(tilert_launch(kernel, f.stream, args, 4) == TILERT_OK, last_error());
  REQUIRE(tilert_stream_sync(f.stream) == TILERT_OK);
  std::vector<float> result(n);
  REQUIRE(tilert_buffer_download(yb, 0, result.data(), n * 4) == TILERT_OK);
  for (int64_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(result[i] == 3.0f * x[i] + y[i]);  // exact: the products and sums are representable
  }
}

struct GemmLaunch {
  CpuFixture f;
  tilert_kernel kernel = f.load_kernel(kGemm, "gemm");
  int64_t mn[2] = {512, 512};
  static constexpr size_t kBytes = 512 * 512 * 2;
  tilert_buffer a = f.buffer(kBytes), b = f.buffer(kBytes), c = f.buffer(kBytes);
  std::vector<tilert_arg> args = {
      tilert_arg_tensor(a, TILERT_F16, 2, mn), tilert_arg_tensor(b, TILERT_F16, 2, mn),
      tilert_arg_tensor(c, TILERT_F16, 2, mn), tilert_arg_int(512),
      tilert_arg_int(512), tilert_arg_int(512)};
  tilert_status launch() { return tilert_launch(kernel, f.stream, args.data(), args.size()); }
};

TEST_CASE("argument mismatches name the argument") {
  GemmLaunch g;
  SUBCASE("count") {
    g.args.pop_back();
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: expected 6 arguments, got 5");
  }
  SUBCASE("a scalar where a tensor belongs") {
    g.args[0] = tilert_arg_int(3);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 0 (A): expected a tensor, got an int");
  }
  SUBCASE("a float for an integer parameter") {
    g.args[3] = tilert_arg_float(512.0);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 3 (M): expected an int (i32), got a float");
  }
  SUBCASE("a scalar out of its dtype's range") {
    g.args[4] = tilert_arg_int(int64_t{1} << 40);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 4 (N): 1099511627776 is out of range for i32");
  }
  SUBCASE("dtype") {
    g.args[2].dtype = TILERT_F32;
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 2 (C): expected f16[512, 512], got f32[512, 512]");
  }
  SUBCASE("rank") {
    int64_t flat = 512 * 512;
    g.args[2] = tilert_arg_tensor(g.c, TILERT_F16, 1, &flat);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 2 (C): expected f16[512, 512], got f16[262144]");
  }
  SUBCASE("shape, against the shape evaluated from the scalars") {
    g.args[5] = tilert_arg_int(256);  // K = 256: A must be [512, 256]
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 0 (A): expected f16[512, 256], got f16[512, 512]");
  }
  SUBCASE("a rank beyond TILERT_MAX_RANK, and an unknown dtype code") {
    g.args[1].rank = 9;
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 1 (B): rank 9 is out of range (0 .. 8)");
    g.args[1].rank = 2;
    g.args[1].dtype = static_cast<tilert_dtype>(42);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 1 (B): unknown dtype code 42");
  }
  SUBCASE("a NULL buffer") {
    g.args[2].buffer = nullptr;
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 2 (C): buffer is NULL");
  }
  SUBCASE("a buffer too small for the tensor") {
    g.args[2].buffer = g.f.buffer(1024);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 2 (C): buffer of 1024 bytes is smaller than "
                     "f16[512, 512] (524288 bytes)");
  }
  SUBCASE("a buffer of another context") {
    CpuFixture other;
    g.args[1].buffer = other.buffer(512 * 512 * 2);
    CHECK_FAILS_WITH(g.launch(), TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: argument 1 (B): buffer is on cpu:0 of another context");
  }
  SUBCASE("a stream of another context") {
    CpuFixture other;
    CHECK_FAILS_WITH(tilert_launch(g.kernel, other.stream, g.args.data(), g.args.size()),
                     TILERT_ERROR_INVALID_ARGUMENT,
                     "launch gemm: the stream is on cpu:0 of another context");
  }
  SUBCASE("a grid the scalars make empty") {
    g.args[3] = tilert_arg_int(-64);
    tilert_status status = g.launch();
    CHECK(status == TILERT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(tilert_last_error()).rfind("launch gemm: ", 0) == 0);
  }
  SUBCASE("NULL args with a nonzero count") {
    CHECK_FAILS_WITH(tilert_launch(g.kernel, g.f.stream, nullptr, 6),
                     TILERT_ERROR_INVALID_ARGUMENT, "tilert_launch: args is NULL");
  }
  // Argument errors are not execution errors: the stream has nothing to report.
  CHECK(tilert_stream_sync(g.f.stream) == TILERT_OK);
}

TEST_CASE("a float scalar beyond its dtype's range") {
  CpuFixture f;
  tilert_kernel kernel = f.load_kernel(read_text_file(kScaleAddPath), "scale_add");
  int64_t n = 8;
  tilert_buffer x = f.buffer(32), y = f.buffer(32);
  tilert_arg args[] = {tilert_arg_tensor(x, TILERT_F32, 1, &n),
                       tilert_arg_tensor(y, TILERT_F32, 1, &n),
                       tilert_arg_float(1e39), tilert_arg_int(n)};
  CHECK_FAILS_WITH(tilert_launch(kernel, f.stream, args, 4), TILERT_ERROR_INVALID_ARGUMENT,
                   "launch scale_add: argument 2 (a): 1e+39 is out of range for f32");
  args[2] = tilert_arg_float(INFINITY);  // infinities are values like any other
  CHECK(tilert_launch(kernel, f.stream, args, 4) == TILERT_OK);
}

TEST_CASE("buffer transfers are bounds-checked") {
  CpuFixture f;
  tilert_buffer buffer = f.buffer(64);
  CHECK(tilert_buffer_size(buffer) == 64);
  std::vector<uint8_t> bytes(128, 7);
  CHECK_FAILS_WITH(tilert_buffer_upload(buffer, 10, bytes.data(), 100),
                   TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_buffer_upload: offset 10 + size 100 exceeds buffer size 64");
  CHECK_FAILS_WITH(tilert_buffer_download(buffer, 65, bytes.data(), 0),
                   TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_buffer_download: offset 65 + size 0 exceeds buffer size 64");
  CHECK_FAILS_WITH(tilert_buffer_download(buffer, 8, bytes.data(), SIZE_MAX),
                   TILERT_ERROR_INVALID_ARGUMENT, "exceeds buffer size 64");
  CHECK_FAILS_WITH(tilert_buffer_upload(buffer, 0, nullptr, 4), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_buffer_upload: src is NULL");
  CHECK(tilert_buffer_upload(buffer, 64, nullptr, 0) == TILERT_OK);
  // A new buffer reads as zeros; a partial upload lands at its offset.
  REQUIRE(tilert_buffer_upload(buffer, 60, bytes.data(), 4) == TILERT_OK);
  std::vector<uint8_t> back(64, 1);
  REQUIRE(tilert_buffer_download(buffer, 0, back.data(), 64) == TILERT_OK);
  CHECK(back[59] == 0);
  CHECK(back[60] == 7);
  CHECK(back[63] == 7);
}

// The producer waits on parity p of a fresh barrier before arriving: parity 1 passes at once,
// parity 0 waits for the phase only its own arrivals complete. The consumer waits for phase 0.
// The verifier cannot know p.
constexpr const char* kParityWait = R"(
kernel parity_wait(Out: f32[64], p: i32) grid(1) threads(64) requires(mbarrier, roles) {
  mbarrier ready(arrivals: 32)
  role producer(threads: 32) {
    wait ready parity(p)
    arrive ready
  }
  role consumer(threads: 32) {
    wait ready parity(0)
    Out[tx] = 1.0
  }
}
)";

TEST_CASE("a deadlocking warp-specialized launch reports the barrier; the stream keeps the error") {
  CpuFixture f;
  tilert_kernel kernel = f.load_kernel(kParityWait, "parity_wait");
  int64_t n = 64;
  tilert_buffer out = f.buffer(64 * 4);
  tilert_arg args[] = {tilert_arg_tensor(out, TILERT_F32, 1, &n), tilert_arg_int(1)};
  REQUIRE_MESSAGE(tilert_launch(kernel, f.stream, args, 2) == TILERT_OK, last_error());
  REQUIRE(tilert_stream_sync(f.stream) == TILERT_OK);

  args[1] = tilert_arg_int(0);
  CHECK_FAILS_WITH(tilert_launch(kernel, f.stream, args, 2), TILERT_ERROR_DEADLOCK,
                   "deadlock in kernel parity_wait");
  CHECK(std::string(tilert_last_error()).find("mbarrier ready") != std::string::npos);
  // A second failing launch does not replace the first error the stream keeps.
  args[1] = tilert_arg_int(1);
  CHECK(tilert_launch(kernel, f.stream, args, 2) == TILERT_OK);
  CHECK_FAILS_WITH(tilert_stream_sync(f.stream), TILERT_ERROR_DEADLOCK, "mbarrier ready");
  CHECK(tilert_stream_sync(f.stream) == TILERT_OK);  // reported once, then cleared
}

// The index into the shared tile depends on a scalar argument, so only execution can find it out
// of bounds: a fault of the kernel, not a bad argument.
constexpr const char* kScalarIndex = R"(
kernel scalar_index(Out: f32[64], i: i32) grid(1) threads(64) {
  shared S: f32[64]
  S[tx] = 2.0
  barrier
  Out[tx] = S[i]
}
)";

TEST_CASE("an out-of-bounds tile access during execution is an execution error") {
  CpuFixture f;
  tilert_kernel kernel = f.load_kernel(kScalarIndex, "scalar_index");
  int64_t n = 64;
  tilert_buffer out = f.buffer(64 * 4);
  tilert_arg args[] = {tilert_arg_tensor(out, TILERT_F32, 1, &n), tilert_arg_int(3)};
  REQUIRE_MESSAGE(tilert_launch(kernel, f.stream, args, 2) == TILERT_OK, last_error());
  args[1] = tilert_arg_int(64);
  CHECK_FAILS_WITH(tilert_launch(kernel, f.stream, args, 2), TILERT_ERROR_EXECUTION,
                   "index 64 out of bounds of S dimension 0 (size 64)");
}

}  // namespace
}  // namespace tilert_test
