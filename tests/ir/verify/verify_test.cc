// Whole-module behaviour: realistic kernels verify clean, the failing fixtures under
// tests/kernels/verify report their rule, and diagnostics read well with and without lines.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value after `# key: ` on its own comment line, or "".
std::string header_value(const std::string& text, std::string_view key) {
  std::string marker = "# " + std::string(key) + ": ";
  size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  size_t begin = at + marker.size();
  return text.substr(begin, text.find('\n', begin) - begin);
}

std::vector<std::filesystem::path> tile_files(std::string_view folder) {
  std::vector<std::filesystem::path> files;
  std::filesystem::path dir = std::filesystem::path(TILERT_SOURCE_DIR) / "tests" / "kernels" / folder;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".tile") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

constexpr std::string_view kPipelinedGemm = R"(
# C[M,N] = A[M,K] @ B[K,N] with 128x128 blocks and a 3-stage pipelined K loop.
kernel gemm(A: f16[M, K], B: f16[K, N], C: f16[M, N], M: i32 = 4096, N: i32 = 4096, K: i32 = 4096)
    grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) requires(f16) {
  shared As: f16[128, 32]
  shared Bs: f16[32, 128]
  fragment acc: f32[128, 128]
  clear acc
  pipelined k in 0 .. ceildiv(K, 32) stages(3) {
    copy A[by * 128 +: 128, k * 32 +: 32] -> As
    copy B[k * 32 +: 32, bx * 128 +: 128] -> Bs
    gemm As, Bs -> acc
  }
  copy acc -> C[by * 128 +: 128, bx * 128 +: 128]
}
)";

constexpr std::string_view kWarpSpecializedGemm = R"(
kernel gemm_ws(A: f16[M, K], B: f16[K, N], C: f32[M, N], M: i32, N: i32, K: i32)
    grid(ceildiv(N, 128), ceildiv(M, 128)) threads(256) requires(f16, mbarrier, roles, async_copy) {
  shared As: f16[2, 128, 64]
  shared Bs: f16[2, 64, 128]
  mbarrier full[2](arrivals: 1)
  mbarrier empty[2](arrivals: 128)
  role producer(threads: 128, regs: 40) {
    serial k in 0 .. ceildiv(K, 64) {
      wait empty[k % 2] parity((k / 2 + 1) % 2)
      arrive_expect_tx full[k % 2] bytes(128 * 64 * 2 + 64 * 128 * 2)
      copy_async A[by * 128 +: 128, k * 64 +: 64] -> As[k % 2] complete(full[k % 2])
      copy_async B[k * 64 +: 64, bx * 128 +: 128] -> Bs[k % 2] complete(full[k % 2])
    }
  }
  role consumer(threads: 128, regs: 232) {
    fragment acc: f32[128, 128]
    clear acc
    serial k in 0 .. ceildiv(K, 64) {
      wait full[k % 2] parity((k / 2) % 2)
      gemm As[k % 2], Bs[k % 2] -> acc
      arrive empty[k % 2]
    }
    copy acc -> C[by * 128 +: 128, bx * 128 +: 128]
  }
}
)";

constexpr std::string_view kSoftmax = R"(
kernel softmax(X: f32[N, 128], Y: f32[N, 128], N: i32) grid(ceildiv(N, 64)) threads(128) {
  shared xs: f32[64, 128]
  fragment x: f32[64, 128]
  fragment row_max: f32[64]
  fragment row_sum: f32[64]
  copy X[bx * 64 +: 64, 0 +: 128] -> xs
  copy xs -> x
  reduce_max x -> row_max dim(1)
  parallel i, j in 0 .. 64, 0 .. 128 {
    x[i, j] = exp2((x[i, j] - row_max[i]) * 1.442695)
  }
  reduce_sum x -> row_sum dim(1)
  parallel i, j in 0 .. 64, 0 .. 128 {
    local inv: f32
    inv = 1.0 / row_sum[i]
    if j < 128 {
      x[i, j] = x[i, j] * inv
    }
  }
  copy x -> Y[bx * 64 +: 64, 0 +: 128]
}
)";

constexpr std::string_view kHistogram = R"(
kernel histogram(X: i32[N], H: i32[256], N: i32) grid(ceildiv(N, 256)) threads(256) requires(atomic) {
  shared hist: i32[256]
  hist[tx] = 0
  barrier
  local v: i32
  if bx * 256 + tx < N {
    v = X[bx * 256 + tx]
    atomic_add hist[v % 256], 1
  }
  barrier
  atomic_add H[tx], hist[tx]
}
)";

TEST_CASE("realistic kernels produce no diagnostics") {
  VerifyOptions options;
  options.shared_memory_limit = 232448;  // an H100 block
  for (std::string_view source : {kPipelinedGemm, kWarpSpecializedGemm, kSoftmax, kHistogram}) {
    expect_clean(source, options);
  }
}

TEST_CASE("the project's sync kernels and examples verify clean") {
  std::vector<std::filesystem::path> files = tile_files("sync");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TILERT_SOURCE_DIR) / "examples"))
    if (entry.path().extension() == ".tile") files.push_back(entry.path());
  CHECK(files.size() >= 15);
  for (const auto& path : files) {
    INFO(path.string());
    auto module = parse_tile(read_file(path), path.string());
    REQUIRE_MESSAGE(module.ok(), module.status().ToString());
    auto diagnostics = verify_module(*module);
    INFO(all_text(diagnostics));
    CHECK(diagnostics.empty());
  }
}

TEST_CASE("the project's deadlock kernels are reported by the static sync rules") {
  // Each deadlocks with its parameter defaults; the CPU backend reports the same hang at run time.
  auto files = tile_files("deadlock");
  CHECK(files.size() >= 3);
  for (const auto& path : files) {
    INFO(path.string());
    auto module = parse_tile(read_file(path), path.string());
    REQUIRE_MESSAGE(module.ok(), module.status().ToString());
    auto diagnostics = verify_module(*module);
    INFO(all_text(diagnostics));
    REQUIRE(diagnostics.size() == 1);
    CHECK((diagnostics[0].rule == "mbarrier-deadlock" || diagnostics[0].rule == "mbarrier-arrival-count"));
    CHECK(diagnostics[0].severity == Severity::kError);
    CHECK(absl::IsInvalidArgument(verify_module_status(*module)));
    // As warnings (module load) they do not make the module invalid.
    VerifyOptions lenient;
    lenient.sync_protocol_severity = Severity::kWarning;
    CHECK(verify_module_status(*module, lenient).ok());
  }
}

TEST_CASE("each failing fixture in tests/kernels/verify reports its rule") {
  auto files = tile_files("verify");
  CHECK(files.size() >= 20);
  for (const auto& path : files) {
    INFO(path.string());
    std::string text = read_file(path);
    std::string rule = header_value(text, "expect-verify");
    std::string message = header_value(text, "expect-message");
    REQUIRE(!rule.empty());
    CHECK(path.stem().string() == rule);
    auto module = parse_tile(text, path.string());
    REQUIRE_MESSAGE(module.ok(), module.status().ToString());
    VerifyOptions options;
    if (std::string limit = header_value(text, "shared-memory-limit"); !limit.empty())
      options.shared_memory_limit = std::stoll(limit);
    auto diagnostics = verify_module(*module, options);
    INFO(all_text(diagnostics));
    REQUIRE(diagnostics.size() == 1);
    CHECK(diagnostics[0].rule == rule);
    CHECK(diagnostics[0].message.find(message) != std::string::npos);
  }
}

TEST_CASE("diagnostics name the line, or the op's pre-order index when lines are unknown") {
  auto module = parse_tile(R"(kernel k() grid(1) threads(128) {
  serial i in 0 .. 2 {
    if tx < 32 {
      barrier
    }
  }
})");
  REQUIRE(module.ok());
  auto diagnostics = verify_module(*module);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].to_string() ==
        "kernel k, line 4: barrier: barrier inside control flow that depends on the thread index "
        "(if at line 3) [barrier-divergence]");

  // As read from bytecode: no source locations anywhere.
  Kernel& kernel = module->kernels[0];
  kernel.loc = {};
  for (Symbol& s : kernel.symbols) s.loc = {};
  visit_stmts(kernel.body, [](const Stmt& s) { const_cast<Stmt&>(s).loc = {}; });
  diagnostics = verify_module(*module);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].op_index == 2);
  CHECK(diagnostics[0].to_string() ==
        "kernel k, op #2: barrier: barrier inside control flow that depends on the thread index "
        "(if, op #1) [barrier-divergence]");

  absl::Status status = verify_module_status(*module);
  CHECK(absl::IsInvalidArgument(status));
  CHECK(std::string(status.message()) == diagnostics[0].to_string());
}

}  // namespace tilert::testing
