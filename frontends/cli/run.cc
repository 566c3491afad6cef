// tilert run IN: launch one kernel on a device with random inputs; optionally check it against the
// float64 CPU reference and time more launches.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "frontends/cli/checked_run.h"
#include "frontends/cli/commands.h"
#include "ir/param_eval.h"
#include "ir/status.h"

namespace tilert::cli {
namespace {

struct RunRequest {
  std::string input;
  std::string kernel;  // empty: the first
  std::string device = "auto";
  std::vector<check::SizeSetting> sizes;
  check::CheckOptions options;
};

// Consumes the option at the cursor when it is one of `run`'s; false when it is not.
absl::StatusOr<bool> take_run_option(ArgCursor& cursor, RunRequest* request) {
  std::string value;
  ASSIGN_OR_RETURN(bool took, cursor.take_option("--kernel", &request->kernel));
  if (took) return true;
  ASSIGN_OR_RETURN(took, cursor.take_option("--device", &request->device));
  if (took) return true;
  ASSIGN_OR_RETURN(took, cursor.take_option("--size", &value));
  if (took) {
    ASSIGN_OR_RETURN(auto settings, check::parse_size_list(value));
    request->sizes.insert(request->sizes.end(), settings.begin(), settings.end());
    return true;
  }
  ASSIGN_OR_RETURN(took, cursor.take_option("--bench", &value));
  if (took) {
    ASSIGN_OR_RETURN(int64_t n, parse_count("--bench", value));
    if (n > 1000000) return absl::InvalidArgumentError("option --bench: at most 1000000");
    request->options.bench_launches = static_cast<int>(n);
    return true;
  }
  ASSIGN_OR_RETURN(took, cursor.take_option("--warmup-ms", &value));
  if (took) {
    ASSIGN_OR_RETURN(int64_t ms, parse_count("--warmup-ms", value));
    if (ms > 600000) return absl::InvalidArgumentError("option --warmup-ms: at most 600000");
    request->options.warmup_ms = static_cast<int>(ms);
    return true;
  }
  ASSIGN_OR_RETURN(took, cursor.take_option("--seed", &value));
  if (took) {
    ASSIGN_OR_RETURN(int64_t seed, parse_count("--seed", value));
    request->options.seed = static_cast<uint64_t>(seed);
    return true;
  }
  if (cursor.take_flag("--check")) {
    request->options.compare = true;
    return true;
  }
  if (cursor.take_flag("--check-races")) {
    request->options.check_races = true;
    return true;
  }
  return false;
}

// Fills `request` from the command line; a non-OK status is a usage error.
absl::Status parse_run_args(std::span<const std::string> args, RunRequest* request) {
  request->options.compare = false;
  ArgCursor cursor(args);
  while (!cursor.done()) {
    ASSIGN_OR_RETURN(bool took, take_run_option(cursor, request));
    if (took) continue;
    if (cursor.at_option()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", cursor.current(), "'"));
    }
    if (!request->input.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", cursor.current(), "'"));
    }
    request->input = cursor.take_positional();
  }
  if (request->input.empty()) return absl::InvalidArgumentError("missing input file");
  return absl::OkStatus();
}

std::string device_name(tilert_device device) {
  tilert_device_info info{};
  if (tilert_device_get_info(device, &info) != TILERT_OK || info.name == nullptr) return "?";
  return info.name;
}

// Prints the comparisons and the verdict; returns the exit code.
int report_check(const check::CheckedRun& run) {
  for (const check::TensorComparison& c : run.comparisons) {
    std::printf("%s\n", check::format_comparison(c).c_str());
  }
  if (run.passed()) {
    std::printf("check: ok\n");
    return kExitOk;
  }
  int failed = 0;
  for (const check::TensorComparison& c : run.comparisons) failed += c.ok() ? 0 : 1;
  std::printf("check: FAILED (%d of %zu tensors outside tolerance)\n", failed,
              run.comparisons.size());
  return kExitFailure;
}

// The parsed, verified input and the kernel to run with its scalar values.
struct PreparedRun {
  InputModule input;
  const Kernel* kernel = nullptr;
  std::vector<check::ScalarValue> scalars;
};

// Everything that can be wrong with the input; every error is exit code 2.
absl::StatusOr<PreparedRun> prepare_run(const RunRequest& request) {
  PreparedRun prepared;
  ASSIGN_OR_RETURN(prepared.input, read_input_module(request.input));
  RETURN_IF_ERROR(verify_input(prepared.input));
  ASSIGN_OR_RETURN(prepared.kernel,
                   select_kernel(prepared.input.module, request.kernel, request.input));
  ASSIGN_OR_RETURN(prepared.scalars, check::resolve_scalar_values(*prepared.kernel, request.sizes));
  // Sizes that give a negative extent or an empty grid are reported before anything runs.
  RETURN_IF_ERROR(eval_launch_shape(*prepared.kernel,
                                    check::integer_param_values(prepared.scalars))
                      .status());
  return prepared;
}

// Loads the module on the requested device, runs, and prints; returns the exit code.
int launch_and_report(const RunRequest& request, const PreparedRun& prepared) {
  const Kernel& kernel = *prepared.kernel;
  tilert_context raw_context = nullptr;
  if (absl::Status s = api_status(tilert_context_create(&raw_context), "creating a context");
      !s.ok()) {
    return report_error(kExitFailure, s);
  }
  ContextHandle context(raw_context);
  tilert_device device = nullptr;
  tilert_status found = tilert_device_find(raw_context, request.device.c_str(), &device);
  if (absl::Status s = api_status(found, absl::StrCat("device '", request.device, "'")); !s.ok()) {
    return report_error(kExitBadInput, s);
  }
  absl::StatusOr<ModuleHandle> module =
      check::load_module(raw_context, device, prepared.input.module);
  if (!module.ok()) return report_error(kExitFailure, module.status());
  tilert_kernel handle = nullptr;
  tilert_status got = tilert_kernel_get(module->get(), kernel.name.c_str(), &handle);
  if (absl::Status s = api_status(got, absl::StrCat("kernel ", kernel.name)); !s.ok()) {
    return report_error(kExitFailure, s);
  }

  std::printf("kernel: %s\ndevice: %s\nsizes: %s\n", kernel.name.c_str(),
              device_name(device).c_str(),
              check::format_scalar_values(kernel, prepared.scalars).c_str());
  std::fflush(stdout);
  absl::StatusOr<check::CheckedRun> run = check::checked_run(
      raw_context, device, handle, kernel, prepared.scalars, request.options);
  if (!run.ok()) {
    // Sizes the launch cannot take are the user's to change; the rest is a failed run.
    bool bad_sizes = absl::IsResourceExhausted(run.status()) ||
                     absl::IsInvalidArgument(run.status());
    return report_error(bad_sizes ? kExitBadInput : kExitFailure, run.status());
  }
  std::printf("launch: %.3f ms\n", run->launch_seconds * 1e3);
  int exit_code = request.options.compare ? report_check(*run) : kExitOk;
  if (request.options.bench_launches > 0) {
    std::printf("bench: %d launches, %s\n", request.options.bench_launches,
                check::format_bench(run->bench_seconds).c_str());
  }
  return exit_code;
}

int run_run(std::span<const std::string> args) {
  RunRequest request;
  if (absl::Status s = parse_run_args(args, &request); !s.ok()) {
    return usage_error(kRunCommand, s);
  }
  absl::StatusOr<PreparedRun> prepared = prepare_run(request);
  if (!prepared.ok()) return report_error(kExitBadInput, prepared.status());
  return launch_and_report(request, *prepared);
}

}  // namespace

const Command kRunCommand = {
    "run",
    "launch a kernel on a device with random inputs (and check it)",
    "usage: tilert run IN [--kernel NAME] [--device SPEC] [--size K=V,...] [--check]\n"
    "                     [--check-races] [--bench N [--warmup-ms T]] [--seed S]\n"
    "\n"
    "Launches one kernel of IN (.tile or .tbc) with seeded random tensors: floats uniform in\n"
    "[-1, 1], integers in [-4, 4] ([0, 8] unsigned). Scalar parameters take their defaults,\n"
    "overridden by --size; a scalar without a default must be given.\n"
    "  --kernel NAME    the kernel to run (default: the first)\n"
    "  --device SPEC    auto (default), cpu, vulkan[:i], cuda[:i] or hip[:i]\n"
    "  --size K=V,...   scalar parameter values (repeatable)\n"
    "  --check          compare every tensor with the float64 CPU reference; exit 1 if any\n"
    "                   element is outside |dev - ref| <= abs + rel * |ref|, the dtype's\n"
    "                   tolerance for a reduction as long as the largest integer parameter\n"
    "  --check-races    first run the CPU reference checking shared memory for data races\n"
    "                   (accesses of different roles or threads not ordered by a barrier);\n"
    "                   exit 1 with the first race\n"
    "  --bench N        time N more launches and print the min and median\n"
    "  --warmup-ms T    before the timed launches, launch untimed for T milliseconds (GPUs\n"
    "                   that idle at low clocks raise them only under sustained work)\n"
    "  --seed S         seed of the random inputs (default 1)\n",
    run_run,
};

}  // namespace tilert::cli
