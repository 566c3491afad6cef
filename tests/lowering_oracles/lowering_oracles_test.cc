// Every kernel of the examples and the sync / barrier-free test kernels, lowered for every GPU
// target and checked by that target's own tool (SPIRV-Tools, ptxas, llc). Kernels a target
// cannot run have an exact expected error instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/text/parser.h"
#include "lowering/lower_kernel.h"
#include "tests/lowering_oracles/target_oracles.h"

namespace tilert::oracles {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> tile_files() {
  std::vector<fs::path> files;
  for (const char* dir :
       {"examples", "tests/kernels/sync", "tests/kernels/barrier_free", "tests/kernels/arith"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(fs::path(TILERT_SOURCE_DIR) / dir)) {
      if (e.path().extension() == ".tile") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The error lower_kernel must report for a kernel on any target, or "" when it must lower.
// Kernels with cluster(...) lower only for targets with thread-block clusters (sm_90a here).
struct ExpectedLoweringError {
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string substring;
};
ExpectedLoweringError expected_lowering_error(const Kernel& k, const lowering::TargetDescription& target) {
  // Thread-block clusters exist on sm_90 and later only; elsewhere the kernel is refused whole.
  if (!k.cluster.empty() && !target.has(lowering::TargetFeature::kClusters))
    return {absl::StatusCode::kUnimplemented, "needs thread-block clusters"};
  return {};
}

struct Tally {
  int checked = 0, passed = 0, expected_errors = 0, skipped = 0, failed = 0;
};

void check_pair(const std::string& where, const Kernel& kernel, const OracleTarget& t,
                Tally& tally, const lowering::LowerOptions& options = {}) {
  const std::string pair = where + " " + t.label + (options.sync_profile ? " (sync profile)" : "") +
                           (options.warpgroup_mma ? " (warpgroup plans)" : "") +
                           (options.tensor_copies ? " (tensor copies)" : "");
  ++tally.checked;
  absl::StatusOr<simt::Function> f = lowering::lower_kernel(kernel, t.target, options);
  ExpectedLoweringError expected = expected_lowering_error(kernel, t.target);
  if (expected.code != absl::StatusCode::kOk) {
    const bool as_expected = !f.ok() && f.status().code() == expected.code &&
                             f.status().message().find(expected.substring) != absl::string_view::npos;
    std::printf("%s: %s\n", pair.c_str(),
                as_expected ? "expected error" : "FAIL (expected error missing)");
    if (as_expected) ++tally.expected_errors; else ++tally.failed;
    CHECK_MESSAGE(!f.ok(), pair, " should fail to lower");
    if (!f.ok()) {
      CHECK_MESSAGE(f.status().code() == expected.code, pair, ": ", f.status().ToString());
      CHECK_MESSAGE(f.status().message().find(expected.substring) != absl::string_view::npos,
                    pair, ": ", f.status().ToString());
    }
    return;
  }
  if (!f.ok()) {
    ++tally.failed;
    std::printf("%s: FAIL lower_kernel: %s\n", pair.c_str(), f.status().ToString().c_str());
    FAIL_CHECK(pair, ": lower_kernel: ", f.status().ToString());
    return;
  }
  if (options.sync_profile) {  // the record is the last parameter, after the status record
    CHECK_MESSAGE(f->profile_param == static_cast<int32_t>(f->params.size()) - 1, pair);
    CHECK_MESSAGE(f->status_param == f->profile_param - 1, pair);
  }
  OracleResult r = check_with_oracle(*f, t);
  switch (r.kind) {
    case OracleResult::kPassed:
      ++tally.passed;
      std::printf("%s: ok\n", pair.c_str());
      break;
    case OracleResult::kSkipped:
      ++tally.skipped;
      std::printf("%s: skipped: %s\n", pair.c_str(), r.first_error.c_str());
      break;
    case OracleResult::kFailed:
      ++tally.failed;
      std::printf("%s: FAIL: %s\n", pair.c_str(), r.first_error.c_str());
      FAIL_CHECK(pair, ": ", r.full_output);
      break;
  }
}

// Every kernel of tile_files() on every target in `targets`.
Tally check_every_kernel(const std::vector<OracleTarget>& targets, const lowering::LowerOptions& options) {
  Tally tally;
  for (const fs::path& file : tile_files()) {
    absl::StatusOr<Module> module = parse_tile(read_text(file), file.filename().string());
    REQUIRE_MESSAGE(module.ok(), file.string(), ": ", module.status().ToString());
    for (const Kernel& kernel : module->kernels) {
      const std::string where = file.filename().string() + ":" + kernel.name;
      for (const OracleTarget& t : targets) check_pair(where, kernel, t, tally, options);
    }
  }
  return tally;
}

TEST_CASE("every kernel lowers for every target and passes the target's own tool") {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as pairs finish
  Tally tally = check_every_kernel(oracle_targets(), {});
  std::printf("lowering oracles: %d (kernel, target) pairs: %d passed, %d expected errors, "
              "%d skipped (tool missing), %d failed\n",
              tally.checked, tally.passed, tally.expected_errors, tally.skipped, tally.failed);
  CHECK(tally.checked > 0);
  CHECK(tally.failed == 0);
}

// Every kernel lowered with `options` for sm_90a passes ptxas; `what` names the lowering in the
// summary line.
void check_sm90a_lowering(const lowering::LowerOptions& options, const char* what) {
  std::vector<OracleTarget> targets = oracle_targets();
  std::erase_if(targets, [](const OracleTarget& t) {
    return t.oracle != Oracle::kPtxas || t.target.name() != "ptx:sm_90a";
  });
  REQUIRE(!targets.empty());
  Tally tally = check_every_kernel(targets, options);
  std::printf("%s lowering: %d (kernel, target) pairs: %d passed, %d expected errors, "
              "%d skipped (tool missing), %d failed\n",
              what, tally.checked, tally.passed, tally.expected_errors, tally.skipped, tally.failed);
  CHECK(tally.checked > 0);
  CHECK(tally.failed == 0);
}

// The instrumented lowering behind `tilert profile --device cuda` must assemble wherever the plain
// one does (its launcher is CUDA's; sm_90a is checked, the instrumentation is the same on sm_80).
TEST_CASE("every kernel lowered with sync profiling passes ptxas") {
  check_sm90a_lowering({.sync_profile = true}, "sync-profiled");
}

// The CUDA runtime lowers with warpgroup plans (wgmma from swizzled tiles) and tensor copies (TMA
// on mbarriers) unless TILERT_CUDA_WGMMA=0 / TILERT_CUDA_TMA=0: what it hands the driver must
// assemble too.
TEST_CASE("every kernel lowered as the CUDA runtime does (warpgroup plans, tensor copies) passes ptxas for sm_90a") {
  check_sm90a_lowering({.warpgroup_mma = true, .tensor_copies = true}, "warpgroup-plan + tensor-copy");
}

}  // namespace
}  // namespace tilert::oracles
