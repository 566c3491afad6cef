// `tilert profile` end to end: the built binary (TILERT_CLI_PATH) on examples/gemm_ws.tile.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/profile/xml_check.h"

namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tilert_profile_test_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `tilert profile ARGS` (shell text; paths hold no spaces or quotes).
CliResult run_profile(const TempDir& dir, const std::string& args) {
  std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  std::string command = std::string("'") + TILERT_CLI_PATH + "' profile " + args + " >'" + out + "' 2>'" + err + "'";
  int status = std::system(command.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

const std::string kGemmWs = std::string(TILERT_SOURCE_DIR) + "/examples/gemm_ws.tile";

// The wait counts of the role table's rows, by role.
std::map<std::string, int> table_waits(const std::string& out) {
  std::map<std::string, int> waits;
  std::istringstream lines(out);
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.rfind("role ", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("overhead:", 0) == 0) {
      in_table = false;
      continue;
    }
    std::istringstream fields(line);
    std::string role;
    int threads = 0, blocks = 0, wait_count = -1;
    fields >> role >> threads >> blocks >> wait_count;
    waits[role] = wait_count;
  }
  return waits;
}

TEST_CASE("tilert profile gemm_ws: table, Chrome trace and SVG") {
  TempDir dir;
  std::string json_path = dir.file("gemm_ws.json"), svg_path = dir.file("gemm_ws.svg");
  CliResult r = run_profile(dir, "'" + kGemmWs + "' --set M=128 --set N=128,K=64 --repeat 1 --trace '" + json_path +
                                     "' --svg '" + svg_path + "'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("kernel: gemm_ws\n") == 0);
  CHECK(r.out.find("sizes: M=128 N=128 K=64\n") != std::string::npos);
  std::map<std::string, int> waits = table_waits(r.out);
  CHECK(waits["producer"] == 2);
  CHECK(waits["consumer"] == 2);
  CHECK(waits["block"] == 0);
  CHECK(r.out.find("overhead: instrumented ") != std::string::npos);
  CHECK(r.out.find("fastest of 1 launch each") != std::string::npos);
  CHECK(r.out.find("trace: " + json_path) != std::string::npos);

  nlohmann::json trace = nlohmann::json::parse(read_file(json_path));
  std::map<int64_t, std::string> lanes;  // tid -> role (one block: pid 0)
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") lanes[e["tid"].get<int64_t>()] = e["args"]["name"];
  CHECK(lanes.size() == 3);
  std::map<std::string, int> wait_events;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "wait") continue;
    CHECK(e["pid"] == 0);
    CHECK(e["dur"].get<double>() >= 0.0);
    ++wait_events[lanes.at(e["tid"].get<int64_t>())];
  }
  CHECK(wait_events["producer"] == 2);
  CHECK(wait_events["consumer"] == 2);

  std::string svg = read_file(svg_path);
  CHECK(tilert::profile::testing::xml_problem(svg) == "");
  CHECK(svg.find("data-role=\"producer\"") != std::string::npos);
  CHECK(svg.find("data-role=\"consumer\"") != std::string::npos);
}

TEST_CASE("tilert profile reads bytecode as well as text") {
  TempDir dir;
  std::string tbc = dir.file("gemm_ws.tbc");
  std::string compile = std::string("'") + TILERT_CLI_PATH + "' compile '" + kGemmWs + "' -o '" + tbc + "' >/dev/null";
  REQUIRE(std::system(compile.c_str()) == 0);
  CliResult r = run_profile(dir, "'" + tbc + "' --kernel gemm_ws --set M=128,N=128,K=32 --repeat 1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::map<std::string, int> waits = table_waits(r.out);
  CHECK(waits["producer"] == 1);
  CHECK(waits["consumer"] == 1);
}

TEST_CASE("tilert profile: devices other than cpu and cuda are refused") {
  TempDir dir;
  CliResult r = run_profile(dir, "'" + kGemmWs + "' --device vulkan:0");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("'vulkan:0': profiling supports cpu and cuda[:N]") != std::string::npos);
  CHECK(r.out.empty());
  r = run_profile(dir, "'" + kGemmWs + "' --device cuda:x");
  CHECK(r.exit_code == 2);
}

// Where a CUDA device is present (the GPU machine), the instrumented lowering runs there: one row
// per role with its waits (one per k step of the 256-deep K loop: 8 steps) and one per warp.
// Elsewhere the launch must fail with the driver's reason, not pretend.
TEST_CASE("tilert profile --device cuda: a device-side profile, or why there is none") {
  TempDir dir;
  CliResult r = run_profile(dir, "'" + kGemmWs + "' --device cuda --trace '" + dir.file("t.json") + "'");
  if (r.exit_code != 0) {
    MESSAGE("no CUDA profile here: ", r.err);
    CHECK(r.exit_code == 1);
    CHECK((r.err.find("libcuda") != std::string::npos || r.err.find("CUDA") != std::string::npos));
    return;
  }
  CHECK(r.out.find("device: cuda:0 (instrumented lowering") != std::string::npos);
  std::map<std::string, int> waits = table_waits(r.out);
  const int blocks = 4;  // M = N = 256 by default: 2 x 2 blocks of 128 x 128
  CHECK(waits["producer"] == 8 * blocks);
  CHECK(waits["consumer"] == 8 * blocks);
  for (int w = 0; w < 8; ++w) CHECK(waits.count("subgroup-" + std::to_string(w)) == 1);
  nlohmann::json trace = nlohmann::json::parse(read_file(dir.file("t.json")));
  CHECK(trace["traceEvents"].size() > 0);
}

TEST_CASE("tilert profile: usage and input errors") {
  TempDir dir;
  CliResult r = run_profile(dir, "");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("missing input file") != std::string::npos);
  r = run_profile(dir, "'" + kGemmWs + "' --set Q=3");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("Q") != std::string::npos);
  r = run_profile(dir, "'" + kGemmWs + "' --repeat 0");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--repeat") != std::string::npos);
  r = run_profile(dir, "'" + kGemmWs + "' --set M=128,N=128,K=32 --repeat 1 --trace '" +
                           dir.file("no/such/dir.json") + "'");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot write") != std::string::npos);
  r = run_profile(dir, "--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("usage: tilert profile IN") == 0);
}

}  // namespace
