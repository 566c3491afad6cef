// The cross-backend conformance harness: every kernel of every .tile under examples/ and
// tests/kernels/{sync,barrier_free,arith}/, on every available device, at its default sizes and at
// each size set of its `# conformance:` lines (tests/conformance/directives.h), with several
// seeds, must match the float64 CPU reference. A new backend's devices join by appearing in the
// device list.
// TILERT_CONFORMANCE_FILTER=substring limits the run to files whose path contains it;
// TILERT_CONFORMANCE_DEVICES=vulkan,cuda to the devices of those backends (the CPU reference
// still checks every result).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>

#include "frontends/cli/checked_run.h"
#include "frontends/text/parser.h"
#include "tests/conformance/directives.h"

namespace tilert::conformance {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSeeds[] = {1, 2, 3};
constexpr const char* kKernelFolders[] = {"examples", "tests/kernels/sync", "tests/kernels/barrier_free",
                                          "tests/kernels/arith"};

std::vector<fs::path> conformance_files() {
  const char* filter = std::getenv("TILERT_CONFORMANCE_FILTER");
  std::vector<fs::path> files;
  for (const char* folder : kKernelFolders) {
    fs::path dir = fs::path(TILERT_SOURCE_DIR) / folder;
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".tile") continue;
      if (filter && e.path().string().find(filter) == std::string::npos) continue;
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct DeviceEntry {
  tilert_device device = nullptr;
  std::string spec;  // "cpu:0"
  std::string backend;
};

std::vector<DeviceEntry> available_devices(tilert_context context) {
  std::vector<DeviceEntry> devices;
  for (int32_t i = 0; i < tilert_device_count(context); ++i) {
    DeviceEntry d;
    tilert_device_info info{};
    if (tilert_device_get(context, i, &d.device) != TILERT_OK ||
        tilert_device_get_info(d.device, &info) != TILERT_OK) {
      FAIL_CHECK("device #" << i << ": " << tilert_last_error());
      continue;
    }
    d.backend = std::string(cli::device_kind_name(info.kind));
    if (const char* only = std::getenv("TILERT_CONFORMANCE_DEVICES")) {
      std::string wanted = std::string(",") + only + ",";
      if (wanted.find("," + d.backend + ",") == std::string::npos) continue;
    }
    d.spec = d.backend + ":" + std::to_string(info.index);
    devices.push_back(d);
  }
  return devices;
}

// The size sets `kernel` runs at: its defaults, then the file-wide sets (keeping the settings it
// has parameters for; a set that keeps none would repeat the defaults), then its own sets.
std::vector<std::vector<check::SizeSetting>> size_sets_for(const Kernel& kernel,
                                                           const FileDirectives& directives) {
  std::vector<std::vector<check::SizeSetting>> sets = {{}};
  for (const auto& file_set : directives.file_wide.size_sets) {
    std::vector<check::SizeSetting> kept;
    for (const check::SizeSetting& s : file_set) {
      for (uint32_t p = 0; p < kernel.num_params; ++p) {
        if (kernel.symbols[p].name == s.name) kept.push_back(s);
      }
    }
    if (!kept.empty()) sets.push_back(kept);
  }
  auto own = directives.per_kernel.find(kernel.name);
  if (own != directives.per_kernel.end()) {
    sets.insert(sets.end(), own->second.size_sets.begin(), own->second.size_sets.end());
  }
  return sets;
}

std::optional<std::string> skip_reason(const Kernel& kernel, const FileDirectives& directives) {
  auto own = directives.per_kernel.find(kernel.name);
  if (own != directives.per_kernel.end() && own->second.skip_reason) return own->second.skip_reason;
  return directives.file_wide.skip_reason;
}

struct Tally {
  int passed = 0;
  int failed = 0;
  std::set<std::string> backends;
  std::vector<std::string> skipped;
};

// Runs one (kernel, size set, device) case with every seed. Returns what failed, or nothing.
std::optional<std::string> run_case(tilert_context context, tilert_device device,
                                    tilert_kernel handle, const Kernel& kernel,
                                    const std::vector<check::SizeSetting>& sizes,
                                    const std::string& label) {
  auto scalars = check::resolve_scalar_values(kernel, sizes);
  if (!scalars.ok()) return label + ": " + std::string(scalars.status().message());
  std::string case_label = label + " " + check::format_scalar_values(kernel, *scalars);
  auto start = std::chrono::steady_clock::now();
  std::optional<std::string> failure;
  for (uint64_t seed : kSeeds) {
    check::CheckOptions options;
    options.seed = seed;
    absl::StatusOr<check::CheckedRun> run =
        check::checked_run(context, device, handle, kernel, *scalars, options);
    std::string where = case_label + " seed " + std::to_string(seed) + ":";
    if (!run.ok()) {
      failure = where + " " + std::string(run.status().message());
      break;
    }
    for (const check::TensorComparison& c : run->comparisons) {
      if (!c.ok()) failure = failure.value_or(where) + "\n  " + check::format_comparison(c);
    }
    if (failure) break;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  std::printf("%s %s (%zu seeds, %.0f ms)\n", failure ? "FAIL" : "ok  ", case_label.c_str(),
              std::size(kSeeds), ms);
  return failure;
}

void run_file(tilert_context context, const std::vector<DeviceEntry>& devices,
              const fs::path& path, Tally* tally) {
  std::string rel = fs::relative(path, TILERT_SOURCE_DIR).string();
  std::ifstream in(path, std::ios::binary);
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<Module> module = parse_tile(source, rel);
  absl::StatusOr<FileDirectives> directives = parse_directives(source);
  if (!module.ok() || !directives.ok()) {
    FAIL_CHECK(rel << ": "
                   << std::string(!module.ok() ? module.status().message()
                                               : directives.status().message()));
    ++tally->failed;
    return;
  }
  for (const Kernel& kernel : module->kernels) {
    if (auto reason = skip_reason(kernel, *directives)) {
      tally->skipped.push_back(rel + " " + kernel.name + " (" + *reason + ")");
      std::printf("skip %s %s: %s\n", rel.c_str(), kernel.name.c_str(), reason->c_str());
    }
  }
  for (const DeviceEntry& device : devices) {
    absl::StatusOr<cli::ModuleHandle> loaded = check::load_module(context, device.device, *module);
    if (!loaded.ok()) {
      // A device whose backend cannot run kernels yet (vulkan before its lowerer) answers
      // Unimplemented with the reason: skipped and said so, never counted as passing.
      if (absl::IsUnimplemented(loaded.status())) {
        std::string reason(loaded.status().message());
        tally->skipped.push_back(rel + " on " + device.spec + " (" + reason + ")");
        std::printf("skip %s on %s: %s\n", rel.c_str(), device.spec.c_str(), reason.c_str());
        continue;
      }
      FAIL_CHECK(rel << " on " << device.spec << ": " << std::string(loaded.status().message()));
      ++tally->failed;
      continue;
    }
    tally->backends.insert(device.backend);
    for (const Kernel& kernel : module->kernels) {
      if (skip_reason(kernel, *directives)) continue;
      tilert_kernel handle = nullptr;
      if (tilert_kernel_get(loaded->get(), kernel.name.c_str(), &handle) != TILERT_OK) {
        FAIL_CHECK(rel << " " << kernel.name << ": " << tilert_last_error());
        ++tally->failed;
        continue;
      }
      std::string label = rel + " " + kernel.name + " on " + device.spec;
      for (const auto& sizes : size_sets_for(kernel, *directives)) {
        std::optional<std::string> failure =
            run_case(context, device.device, handle, kernel, sizes, label);
        if (failure) FAIL_CHECK(*failure);
        ++(failure ? tally->failed : tally->passed);
      }
    }
  }
}

TEST_CASE("every kernel matches the float64 reference on every device") {
  std::vector<fs::path> files = conformance_files();
  REQUIRE_MESSAGE(!files.empty(), "no .tile files under examples/ or tests/kernels/sync/");
  tilert_context raw = nullptr;
  REQUIRE_MESSAGE(tilert_context_create(&raw) == TILERT_OK, tilert_last_error());
  cli::ContextHandle context(raw);
  std::vector<DeviceEntry> devices = available_devices(raw);
  REQUIRE_MESSAGE(!devices.empty(), "no devices: the cpu backend should always be there");

  Tally tally;
  for (const fs::path& file : files) run_file(raw, devices, file, &tally);

  std::string backends;
  for (const std::string& b : tally.backends) backends += (backends.empty() ? "" : ", ") + b;
  std::printf("conformance: ran on %s (%zu device%s): %d of %d (kernel, size, device) cases "
              "passed, %zu kernel%s skipped\n",
              backends.empty() ? "no backend" : backends.c_str(), devices.size(),
              devices.size() == 1 ? "" : "s", tally.passed, tally.passed + tally.failed,
              tally.skipped.size(), tally.skipped.size() == 1 ? "" : "s");
  for (const std::string& s : tally.skipped) std::printf("  skipped: %s\n", s.c_str());
  CHECK(tally.failed == 0);
  CHECK(tally.passed > 0);
}

// The harness itself must notice a wrong result: this kernel rounds x + 1000 through an f16 tile,
// which the exact run does and the float64 reference does not.
TEST_CASE("a result outside tolerance fails its case") {
  absl::StatusOr<Module> module = parse_tile(R"(
kernel lossy(X: f32[N], Y: f32[N], N: i32 = 64) grid(1) threads(64) requires(f16) {
  fragment t: f16[64]
  fragment y: f32[64]
  copy X[0 +: 64] -> y
  parallel i in 0 .. 64 {
    t[i] = y[i] + 1000.0
  }
  parallel i in 0 .. 64 {
    y[i] = t[i] - 1000.0
  }
  copy y -> Y[0 +: 64]
}
)", "lossy.tile");
  REQUIRE_MESSAGE(module.ok(), std::string(module.status().message()));
  tilert_context raw = nullptr;
  REQUIRE(tilert_context_create(&raw) == TILERT_OK);
  cli::ContextHandle context(raw);
  tilert_device cpu = nullptr;
  REQUIRE(tilert_device_find(raw, "cpu", &cpu) == TILERT_OK);
  absl::StatusOr<cli::ModuleHandle> loaded = check::load_module(raw, cpu, *module);
  REQUIRE(loaded.ok());
  tilert_kernel handle = nullptr;
  REQUIRE(tilert_kernel_get(loaded->get(), "lossy", &handle) == TILERT_OK);

  const std::string label = "deliberately lossy kernel on cpu:0";
  std::optional<std::string> failure = run_case(raw, cpu, handle, module->kernels[0], {}, label);
  REQUIRE(failure.has_value());
  CHECK(failure->find(label + " N=64 seed 1:\n  Y: max abs err") != std::string::npos);
  CHECK(failure->find("FAIL (") != std::string::npos);

  std::vector<check::SizeSetting> unknown = {{"Q", "1"}};
  failure = run_case(raw, cpu, handle, module->kernels[0], unknown, label);
  REQUIRE(failure.has_value());
  CHECK(failure->find("no scalar parameter 'Q'") != std::string::npos);
}

}  // namespace
}  // namespace tilert::conformance
