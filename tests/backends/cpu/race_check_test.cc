// Race checking in the CPU reference (RunOptions::check_races): no false positives on the
// synchronized kernels, races between roles and between threads reported with both accesses.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/cpu/memory.h"
#include "ir/param_eval.h"
#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Arguments for `kernel` at its default sizes: deterministic tensors, kept alive here.
struct DefaultArgs {
  std::vector<HostTensor> tensors;
  std::vector<ArgValue> args;
};

DefaultArgs default_args(const Kernel& kernel) {
  std::vector<int64_t> values(kernel.num_params, 0);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    const Symbol& s = kernel.symbols[p];
    if (s.kind != SymbolKind::kScalarParam) continue;
    REQUIRE_MESSAGE(s.default_value.has_value(), kernel.name, ": ", s.name, " has no default");
    std::optional<int64_t> v = const_int_value(*s.default_value);
    REQUIRE(v.has_value());
    values[p] = *v;
  }
  absl::StatusOr<LaunchShape> shape = eval_launch_shape(kernel, values);
  REQUIRE_MESSAGE(shape.ok(), shape.status().ToString());
  DefaultArgs d;
  d.tensors.reserve(kernel.num_params);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    if (kernel.symbols[p].kind == SymbolKind::kScalarParam) {
      d.args.push_back(values[p]);
      continue;
    }
    d.tensors.emplace_back(kernel.symbols[p].dtype, static_cast<size_t>(element_count(shape->tensor_shapes[p])));
    HostTensor& t = d.tensors.back();
    for (size_t i = 0; i < t.size(); ++i) t.set(i, pseudo_random(i + 1000 * p));
    d.args.push_back(t.arg());
  }
  return d;
}

std::vector<std::filesystem::path> synchronized_kernel_files() {
  std::vector<std::filesystem::path> files = {std::filesystem::path(TILERT_SOURCE_DIR) / "examples/gemm_ws.tile"};
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TILERT_SOURCE_DIR) /
                                                               "tests/kernels/sync"))
    if (entry.path().extension() == ".tile") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

RunOptions checking() {
  RunOptions options;
  options.check_races = true;
  return options;
}

TEST_CASE("the warp-specialized GEMM and every sync kernel run race-free, with unchanged results") {
  std::vector<std::filesystem::path> files = synchronized_kernel_files();
  CHECK(files.size() >= 11);
  for (const std::filesystem::path& file : files) {
    absl::StatusOr<Module> module = parse_tile(read_text(file), file.string());
    REQUIRE_MESSAGE(module.ok(), module.status().ToString());
    for (const Kernel& kernel : module->kernels) {
      INFO(file.filename().string(), ": ", kernel.name);
      DefaultArgs plain = default_args(kernel), checked = default_args(kernel);
      // One host thread: atomic adds of blocks running in parallel would sum in any order.
      RunOptions serial;
      serial.num_threads = 1;
      RunOptions checked_serial = checking();
      checked_serial.num_threads = 1;
      absl::Status normal = run_kernel(kernel, plain.args, serial);
      REQUIRE_MESSAGE(normal.ok(), normal.ToString());
      absl::Status status = run_kernel(kernel, checked.args, checked_serial);
      REQUIRE_MESSAGE(status.ok(), status.ToString());
      REQUIRE(plain.tensors.size() == checked.tensors.size());
      for (size_t t = 0; t < plain.tensors.size(); ++t)
        for (size_t i = 0; i < plain.tensors[t].size(); ++i)
          REQUIRE(plain.tensors[t].get(i) == checked.tensors[t].get(i));
    }
  }
}

// The consumer of a 2-stage ring reads its stage without waiting on `full` (line 16). With N = 2
// each stage is used once, so the schedule neither deadlocks nor shows wrong data.
constexpr const char* kMissingWait = R"(
kernel ring(A: f32[N, 64], Out: f32[64], N: i32 = 2) grid(1) threads(256) requires(mbarrier, roles, async_copy) {
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
    serial k in 0 .. N {
      copy S[k % 2] -> acc
      arrive empty[k % 2]
    }
    copy acc -> Out
  }
}
)";

TEST_CASE("a consumer reading a stage without waiting on its mbarrier is a race between roles") {
  Kernel kernel = parse_kernel(kMissingWait);
  HostTensor a(DType::kF32, 2 * 64), out(DType::kF32, 64);
  std::vector<ArgValue> args = {a.arg(), out.arg(), int64_t{2}};
  // Without checking, the schedule happens to deliver the data: nothing is reported.
  CHECK(run_kernel(kernel, args).ok());
  absl::Status status = run_kernel(kernel, args, checking());
  CHECK(absl::IsDataLoss(status));
  CHECK(std::string(status.message()) ==
        "race in kernel ring block (0,0,0) on S[0, 0]: write by copy_async at line 10 (role producer) and "
        "read by copy at line 16 (role consumer) are not ordered by any barrier");

  // With the wait the same kernel is clean.
  std::string fixed = kMissingWait;
  std::string copy = "      copy S[k % 2] -> acc";
  fixed.replace(fixed.find(copy), copy.size(), "      wait full[k % 2] parity((k / 2) % 2)\n" + copy);
  Kernel good = parse_kernel(fixed);
  absl::Status clean = run_kernel(good, args, checking());
  CHECK_MESSAGE(clean.ok(), clean.ToString());
}

// The reader signals `go` before it reads S; the writer waits on `go` and then overwrites S.
constexpr const char* kEarlySignal = R"(
kernel early_signal(Out: f32[64]) grid(1) threads(128) requires(mbarrier, roles) {
  shared S: f32[64]
  mbarrier go(arrivals: 64)
  role writer(threads: 64) {
    wait go parity(0)
    fill S, 1.0
  }
  role reader(threads: 64) {
    fragment f: f32[64]
    arrive go
    copy S -> f
    copy f -> Out
  }
}
)";

TEST_CASE("an arrival before the read does not order the read before another role's write") {
  HostTensor out(DType::kF32, 64);
  std::vector<ArgValue> args = {out.arg()};
  Kernel kernel = parse_kernel(kEarlySignal);
  absl::Status status = run_kernel(kernel, args, checking());
  CHECK(absl::IsDataLoss(status));
  CHECK(std::string(status.message()) ==
        "race in kernel early_signal block (0,0,0) on S[0]: read by copy at line 12 (role reader) and write by "
        "fill at line 7 (role writer) are not ordered by any barrier");
  // Signalling after the read orders it.
  std::string fixed = kEarlySignal;
  std::string arrive = "    arrive go\n";
  fixed.erase(fixed.find(arrive), arrive.size());
  std::string read = "    copy S -> f\n";
  fixed.insert(fixed.find(read) + read.size(), arrive);
  absl::Status clean = run_kernel(parse_kernel(fixed), args, checking());
  CHECK_MESSAGE(clean.ok(), clean.ToString());
}

// Thread tx writes S[tx]; thread tx then reads its neighbour's element (line 6).
constexpr const char* kNeighbour = R"(
kernel neighbour(Y: f32[64]) grid(1) threads(64) {
  shared S: f32[64]
  S[tx] = f32(tx)
  BARRIER
  Y[tx] = S[(tx + 1) % 64]
}
)";

std::string neighbour(const std::string& between) {
  std::string source = kNeighbour;
  return source.replace(source.find("BARRIER"), 7, between);
}

TEST_CASE("threads reading each other's shared elements without a barrier race") {
  HostTensor y(DType::kF32, 64);
  std::vector<ArgValue> args = {y.arg()};
  Kernel racy = parse_kernel(neighbour(""));
  absl::Status status = run_kernel(racy, args, checking());
  CHECK(absl::IsDataLoss(status));
  CHECK(std::string(status.message()) ==
        "race in kernel neighbour block (0,0,0) on S[1]: write by assign at line 4 (thread 1) and read by "
        "assign at line 6 (thread 0) are not ordered by any barrier");

  Kernel fenced = parse_kernel(neighbour("barrier"));
  absl::Status clean = run_kernel(fenced, args, checking());
  REQUIRE_MESSAGE(clean.ok(), clean.ToString());
  for (size_t i = 0; i < 64; ++i) CHECK(y.get(i) == static_cast<double>((i + 1) % 64));
}

TEST_CASE("a subgroup barrier orders the threads of one subgroup only") {
  HostTensor y(DType::kF32, 64);
  std::vector<ArgValue> args = {y.arg()};
  // Thread 31 reads S[0], written by thread 0 of the same subgroup; thread 63 reads S[32].
  Kernel same = parse_kernel(neighbour("subgroup_barrier").replace(
      neighbour("subgroup_barrier").find("(tx + 1) % 64"), 13, "tx / 32 * 32"));
  absl::Status clean = run_kernel(same, args, checking());
  CHECK_MESSAGE(clean.ok(), clean.ToString());
  // Thread 31 reads S[32], written by the next subgroup.
  Kernel across = parse_kernel(neighbour("subgroup_barrier"));
  absl::Status status = run_kernel(across, args, checking());
  CHECK(absl::IsDataLoss(status));
  CHECK(std::string(status.message()).find("on S[32]: write by assign at line 4 (thread 32) and read by assign "
                                           "at line 6 (thread 31)") != std::string::npos);
}

TEST_CASE("a shared element written by two threads in one statement is a race") {
  Kernel kernel = parse_kernel(R"(
kernel same_slot(Y: f32[64]) grid(1) threads(64) {
  shared S: f32[4]
  S[tx % 4] = 1.0
}
)");
  HostTensor y(DType::kF32, 64);
  std::vector<ArgValue> args = {y.arg()};
  absl::Status status = run_kernel(kernel, args, checking());
  CHECK(absl::IsDataLoss(status));
  CHECK(std::string(status.message()).find("on S[0]: write by assign at line 4 (thread 0) and write by assign "
                                           "at line 4 (thread 4)") != std::string::npos);
}

#ifdef TILERT_CLI_PATH
TEST_CASE("tilert run --check-races exits 1 with the race") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tilert_race_check_test";
  std::filesystem::create_directories(dir);
  std::filesystem::path tile = dir / "ring.tile";
  std::ofstream(tile) << kMissingWait;
  std::string command = std::string(TILERT_CLI_PATH) + " run " + tile.string() +
                        " --device cpu --check-races 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[512];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_MESSAGE(output.find("race in kernel ring block (0,0,0) on S[0, 0]: write by copy_async at line 10 "
                            "(role producer) and read by copy at line 16 (role consumer)") != std::string::npos,
                output);
  // Without the flag the same run succeeds.
  std::string plain = std::string(TILERT_CLI_PATH) + " run " + tile.string() + " --device cpu > /dev/null 2>&1";
  CHECK(std::system(plain.c_str()) == 0);
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace tilert::cpu::testing
