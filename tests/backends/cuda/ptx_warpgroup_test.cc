// The PTX emitter's warpgroup statements (wgmma.mma_async with shared-memory descriptors, its
// fence / commit / wait, fence.proxy.async): a hand-built warpgroup product assembled with ptxas
// for sm_90a, the descriptor fields in the text, and errors for targets and operands it cannot take.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_emit.h"
#include "frontends/text/parser.h"
#include "lowering/lower_kernel.h"
#include "ptx_test_util.h"

namespace tilert::cuda {
namespace {

using namespace testing;
using simt::Expr;
using simt::Stmt;
using simt::StmtKind;

Stmt simple(StmtKind kind, uint32_t a = 0) {
  Stmt s;
  s.kind = kind;
  s.a = a;
  return s;
}

// One warpgroup: D[64 x 16 n] += A[64 x 16] * B[16 x 16 n] once per k step, A and B in shared
// arrays in core-matrix order (A: 64 x 16, k stride 128 bytes, m stride 256; B: 16 x 16 n, k
// stride 16 n * 16 bytes, n stride 128). Accumulators 0 .. n - 1.
simt::Function warpgroup_kernel(DType input, int n_tiles, Expr a_offset) {
  simt::Function f;
  f.name = "warpgroup_product";
  f.threads = 128;
  f.params.push_back({"C", true, DType::kF32, true});
  f.shared.push_back({"a_tile", input, 64 * 16});
  f.shared.push_back({"b_tile", input, int64_t{16} * 16 * n_tiles});
  for (int j = 0; j < n_tiles; ++j) f.matrices.push_back({"acc", simt::MatrixUse::kAccumulator, DType::kF32});
  for (int j = 0; j < n_tiles; ++j) f.body.push_back(matrix_fill(static_cast<uint32_t>(j), f32(0)));
  f.body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  f.body.push_back(simple(StmtKind::kProxyFence));
  f.body.push_back(simple(StmtKind::kWarpgroupFence));
  Stmt mma;
  mma.kind = StmtKind::kWarpgroupMma;
  mma.id = 0;
  mma.a = static_cast<uint32_t>(n_tiles);
  mma.array = 0;
  mma.space = simt::Space::kShared;
  mma.b = 1;
  mma.operands = {std::move(a_offset), i32(128), i32(256), i32(0), i32(16 * 16 * n_tiles), i32(128)};
  f.body.push_back(mma);
  f.body.push_back(simple(StmtKind::kWarpgroupCommit));
  f.body.push_back(simple(StmtKind::kWarpgroupWait, 0));
  return f;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void check_sm90a_assembles(const std::string& ptx) { check_ptx_assembles(ptx, "sm_90a"); }

TEST_CASE("a warpgroup product assembles for sm_90a with the descriptor fields in place") {
  for (DType input : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(input));
    simt::Function f = warpgroup_kernel(input, 8, i32(0));
    absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
    REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
    const std::string t = input == DType::kBF16 ? "bf16" : "f16";
    // A: LBO 128 >> 4 = 8 at bit 16, SBO 256 >> 4 = 16 at bit 32; B: LBO 2048 >> 4 = 128, SBO 8.
    for (const std::string& text : {
             std::string("wgmma.mma_async.sync.aligned.m64n128k16.f32.") + t + "." + t + " {%mat0_0, %mat0_1,",
             std::string("%mat7_7}, "), std::string(", 1, 1, 0, 1;"),
             std::string("or.b64 %rd"), std::string(", 68720001024;"),  // (16 << 32) | (8 << 16)
             std::string(", 34368126976;"),                              // (8 << 32) | (128 << 16)
             std::string("wgmma.fence.sync.aligned;"), std::string("wgmma.commit_group.sync.aligned;"),
             std::string("wgmma.wait_group.sync.aligned 0;"), std::string("fence.proxy.async.shared::cta;")}) {
      INFO(text);
      CHECK(contains(*ptx, text));
    }
    check_sm90a_assembles(*ptx);
  }
  // A run-time offset goes through the 16-byte unit conversion.
  simt::Function f = warpgroup_kernel(DType::kF16, 4, Expr::binary(BinaryOp::kMul, Expr::builtin(simt::Builtin::kWorkgroupIdX), i32(0)));
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
  CHECK(contains(*ptx, "m64n64k16"));
}

TEST_CASE("a warpgroup product with A in registers and B K-major assembles for sm_90a") {
  // A: the warp's 16 rows as an A matrix (4 registers, mma.m16n8k16's A fragment); B stored
  // n x k (K-major, imm-trans-b 0), 128-byte rows swizzled: stride byte offset 8 rows = 1024.
  simt::Function f = warpgroup_kernel(DType::kBF16, 4, i32(0));
  f.shared[1] = {"b_tile", DType::kBF16, 64 * 64, 1024};
  const uint32_t a = static_cast<uint32_t>(f.matrices.size());
  f.matrices.push_back({"probs", simt::MatrixUse::kA, DType::kBF16});
  Stmt& mma = f.body[7];
  REQUIRE(mma.kind == StmtKind::kWarpgroupMma);
  mma.space = simt::Space::kPrivate;
  mma.array = a;
  mma.operands = {i32(0), i32(0), i32(0), i32(0), i32(16), i32(1024), i32(0), i32(128), i32(1)};
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
  const std::string a_regs = "{%mat4_0, %mat4_1, %mat4_2, %mat4_3}";
  CHECK(contains(*ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%mat0_0,"));
  CHECK(contains(*ptx, absl::StrCat("%mat3_7}, ", a_regs, ", %rd")));
  CHECK(contains(*ptx, ", 1, 1, 0;"));  // scale-a, scale-b, imm-trans-b 0; no imm-trans-a
  // B's fields: LBO 16 >> 4 = 1, SBO 1024 >> 4 = 64, 128-byte swizzle (mode 1).
  CHECK(contains(*ptx, absl::StrCat(", ", (uint64_t{1} << 16) | (uint64_t{64} << 32) | (uint64_t{1} << 62), ";")));
  check_sm90a_assembles(*ptx);
  // The register operand must be an A matrix.
  simt::Function wrong = f;
  wrong.body[7].array = 0;
  absl::Status s = emit_ptx(wrong, target("ptx:sm_90a")).status();
  CHECK(contains(std::string(s.message()), "is not an A matrix"));
}

TEST_CASE("attention kernels lowered with warpgroup plans assemble for sm_90a") {
  // Q K^T with K read K-major, P V with the probabilities in registers (tests/bench/kernels).
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/tests/bench/kernels/flash_attention_m128.tile");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Module> m = parse_tile(text.str());
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  for (const Kernel& k : m->kernels) {
    INFO(k.name);
    absl::StatusOr<simt::Function> f = lowering::lower_kernel(k, target("ptx:sm_90a"), {.warpgroup_mma = true});
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    absl::StatusOr<std::string> ptx = emit_ptx(*f, target("ptx:sm_90a"));
    REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
    CHECK(contains(*ptx, ", 1, 1, 0, 0;"));  // Q K^T: descriptors, B K-major
    CHECK(contains(*ptx, "}, {%mat"));         // P V: A from registers
    CHECK_FALSE(contains(*ptx, "ldmatrix"));
    check_sm90a_assembles(*ptx);
  }
}

TEST_CASE("warpgroup statements are refused where they cannot be emitted") {
  // sm_80 has neither wgmma nor the async proxy.
  absl::Status s80 = emit_ptx(warpgroup_kernel(DType::kF16, 8, i32(0)), target("ptx:sm_80")).status();
  CHECK(s80.code() == absl::StatusCode::kUnimplemented);
  CHECK(contains(std::string(s80.message()), "sm_80"));
  auto message = [](const simt::Function& f) {
    absl::Status s = emit_ptx(f, target("ptx:sm_90a")).status();
    CHECK(!s.ok());
    return std::string(s.message());
  };
  // An offset that is not 16-byte aligned, or past the array.
  CHECK(contains(message(warpgroup_kernel(DType::kF16, 8, i32(4))), "16-byte aligned"));
  CHECK(contains(message(warpgroup_kernel(DType::kF16, 8, i32(64 * 16))), "16-byte aligned"));
  // N above 256.
  simt::Function wide = warpgroup_kernel(DType::kF16, 8, i32(0));
  wide.body[11].a = 17;
  CHECK(contains(message(wide), "N = 272"));
  // A descriptor byte offset that is not a multiple of 16 bytes.
  simt::Function odd = warpgroup_kernel(DType::kF16, 8, i32(0));
  odd.body[11].operands[1] = i32(24);
  CHECK(contains(message(odd), "byte offset 24"));
  // A swizzle width the descriptor has no mode for, and a swizzled array not aligned to its pattern.
  simt::Function swizzled = warpgroup_kernel(DType::kF16, 8, i32(0));
  swizzled.body[11].operands.push_back(i32(48));
  swizzled.body[11].operands.push_back(i32(0));
  CHECK(contains(message(swizzled), "swizzle of 48 bytes"));
  swizzled.body[11].operands[6] = i32(128);
  CHECK(contains(message(swizzled), "needs 1024"));
  // f32 operands have no wgmma here.
  simt::Function f32_tiles = warpgroup_kernel(DType::kF16, 8, i32(0));
  f32_tiles.shared[0].type = DType::kF32;
  f32_tiles.shared[1].type = DType::kF32;
  CHECK(contains(message(f32_tiles), "both f16 or both bf16"));
  // Not whole warpgroups.
  simt::Function warp = warpgroup_kernel(DType::kF16, 8, i32(0));
  warp.threads = 96;
  CHECK(contains(message(warp), "whole warpgroups"));
}

TEST_CASE("pipelined GEMMs lowered with warpgroup plans assemble for sm_90a") {
  // One warpgroup (128 threads, 128x128 tile, k step 32) and two (256 threads, 128x256, k step 64).
  for (auto [threads, bn, bk] : {std::tuple{128, 128, 32}, std::tuple{256, 256, 64}}) {
    const std::string n = std::to_string(bn), k = std::to_string(bk);
    const std::string text =
        "kernel g(A: bf16[M, K], B: bf16[K, N], C: bf16[M, N], M: i32 = 256, N: i32 = 256, K: i32 = 256)\n"
        "    grid(ceildiv(N, " + n + "), ceildiv(M, 128)) threads(" + std::to_string(threads) + ") {\n"
        "  shared As: bf16[128, " + k + "]\n  shared Bs: bf16[" + k + ", " + n + "]\n"
        "  fragment acc: f32[128, " + n + "]\n  clear acc\n"
        "  pipelined kk in 0 .. ceildiv(K, " + k + ") stages(3) {\n"
        "    copy A[by * 128 +: 128, kk * " + k + " +: " + k + "] -> As\n"
        "    copy B[kk * " + k + " +: " + k + ", bx * " + n + " +: " + n + "] -> Bs\n"
        "    gemm As, Bs -> acc\n  }\n"
        "  copy acc -> C[by * 128 +: 128, bx * " + n + " +: " + n + "]\n}\n";
    INFO(text);
    absl::StatusOr<Module> m = parse_tile(text);
    REQUIRE_MESSAGE(m.ok(), m.status().ToString());
    absl::StatusOr<simt::Function> f =
        lowering::lower_kernel(m->kernels.at(0), target("ptx:sm_90a"), {.warpgroup_mma = true});
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    absl::StatusOr<std::string> ptx = emit_ptx(*f, target("ptx:sm_90a"));
    REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
    CHECK(contains(*ptx, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(threads == 128 ? 128 : 256) + "k16.f32.bf16.bf16"));
    CHECK(contains(*ptx, "shfl.sync.idx.b32"));  // descriptor offsets made warp-uniform
    // Swizzled operands: A's rows are the k step (64 or 128 bytes: 64- or 128-byte swizzle,
    // descriptor mode 2 or 1 in bits 62-63), the stride byte offset 8 rows, the leading one
    // unused (16). B's rows are 256 or 512 bytes: 128-byte column blocks (mode 1) of k rows each,
    // the leading byte offset between blocks, the stride byte offset 8 rows of 128 bytes.
    const uint64_t a_mode = bk == 32 ? 2 : 1, a_row = bk * 2;
    const uint64_t a_fields = (uint64_t{1} << 16) | ((8 * a_row >> 4) << 32) | (a_mode << 62);
    const uint64_t b_fields = ((uint64_t(bk) * 128 >> 4) << 16) | ((uint64_t{1024} >> 4) << 32) | (uint64_t{1} << 62);
    CHECK(contains(*ptx, absl::StrCat(", ", a_fields, ";")));
    CHECK(contains(*ptx, absl::StrCat(", ", b_fields, ";")));
    CHECK(contains(*ptx, ".extern .shared .align 1024 .b8"));
    // A spare buffer fits (dense tiles): the products stay in flight across the copy issue.
    CHECK(contains(*ptx, "wgmma.wait_group.sync.aligned 1;"));
    CHECK_FALSE(contains(*ptx, "ldmatrix"));
    check_sm90a_assembles(*ptx);
  }
}

}  // namespace
}  // namespace tilert::cuda
