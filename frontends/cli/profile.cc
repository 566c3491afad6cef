// tilert profile IN: run one kernel on the CPU backend or a CUDA device with every barrier wait
// timed, print where each role waited, and optionally write a Chrome trace and an SVG timeline.
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"
#include "absl/strings/numbers.h"
#include "frontends/cli/profile_gpu.h"
#include "frontends/cli/profile_report.h"
#include "frontends/cli/profile_run.h"
#include "frontends/cli/profile_writers.h"
#include "ir/param_eval.h"
#include "ir/status.h"

namespace tilert::cli {
namespace {

struct ProfileRequest {
  std::string input;
  std::string kernel;  // empty: the first
  std::string device = "cpu";
  std::vector<check::SizeSetting> settings;
  std::string trace_path;
  std::string svg_path;
  profile::ProfileOptions options;
};

absl::StatusOr<bool> take_profile_option(ArgCursor& cursor, ProfileRequest* request) {
  std::string value;
  ASSIGN_OR_RETURN(bool took, cursor.take_option("--kernel", &request->kernel));
  if (took) return true;
  ASSIGN_OR_RETURN(took, cursor.take_option("--device", &request->device));
  if (took) return true;
  ASSIGN_OR_RETURN(took, cursor.take_option("--trace", &request->trace_path));
  if (took) return true;
  ASSIGN_OR_RETURN(took, cursor.take_option("--svg", &request->svg_path));
  if (took) return true;
  ASSIGN_OR_RETURN(took, cursor.take_option("--set", &value));
  if (took) {
    ASSIGN_OR_RETURN(auto settings, check::parse_size_list(value));
    request->settings.insert(request->settings.end(), settings.begin(), settings.end());
    return true;
  }
  ASSIGN_OR_RETURN(took, cursor.take_option("--repeat", &value));
  if (took) {
    ASSIGN_OR_RETURN(int64_t n, parse_count("--repeat", value));
    if (n < 1 || n > 1000) return absl::InvalidArgumentError("option --repeat: 1..1000");
    request->options.repeat = static_cast<int>(n);
    return true;
  }
  ASSIGN_OR_RETURN(took, cursor.take_option("--seed", &value));
  if (took) {
    ASSIGN_OR_RETURN(int64_t seed, parse_count("--seed", value));
    request->options.seed = static_cast<uint64_t>(seed);
    return true;
  }
  return false;
}

absl::Status parse_profile_args(std::span<const std::string> args, ProfileRequest* request) {
  ArgCursor cursor(args);
  while (!cursor.done()) {
    ASSIGN_OR_RETURN(bool took, take_profile_option(cursor, request));
    if (took) continue;
    if (cursor.at_option()) return absl::InvalidArgumentError(absl::StrCat("unknown option '", cursor.current(), "'"));
    if (!request->input.empty())
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", cursor.current(), "'"));
    request->input = cursor.take_positional();
  }
  if (request->input.empty()) return absl::InvalidArgumentError("missing input file");
  return absl::OkStatus();
}

struct ProfileDevice {
  bool cuda = false;
  int ordinal = 0;
};

// "cpu", "cpu:0", "cuda", "cuda:N": the devices a profile can instrument.
absl::StatusOr<ProfileDevice> parse_profile_device(const std::string& spec) {
  if (spec == "cpu" || spec == "cpu:0") return ProfileDevice{};
  if (spec == "cuda") return ProfileDevice{.cuda = true};
  int ordinal = 0;
  if (spec.rfind("cuda:", 0) == 0 && absl::SimpleAtoi(spec.substr(5), &ordinal) && ordinal >= 0)
    return ProfileDevice{.cuda = true, .ordinal = ordinal};
  return absl::InvalidArgumentError(absl::StrCat("option --device: '", spec, "': profiling supports cpu and cuda[:N] "
                                                 "(the Vulkan and HIP lowerings take the same instrumentation, but "
                                                 "their launchers do not run it yet)"));
}

absl::Status write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

// Prints the report and writes the requested files; returns the exit code.
int report(const ProfileRequest& request, const Kernel& kernel, const profile::ProfileResult& result) {
  std::vector<const cpu::SyncLane*> lanes = result.lanes();
  std::printf("%s%s\n", profile::format_role_table(profile::summarize_roles(lanes)).c_str(),
              profile::format_overhead(result).c_str());
  if (result.dropped_waits > 0)
    std::printf("note: %lld waits did not fit the device record and are missing above\n",
                static_cast<long long>(result.dropped_waits));
  std::vector<profile::TimelineRow> rows = profile::timeline_rows(lanes);
  if (!request.trace_path.empty()) {
    absl::Status s = write_file(request.trace_path, profile::chrome_trace_json(rows, kernel.name));
    if (!s.ok()) return report_error(kExitFailure, s);
    std::printf("trace: %s\n", request.trace_path.c_str());
  }
  if (!request.svg_path.empty()) {
    absl::Status s = write_file(request.svg_path, profile::svg_timeline(rows, kernel.name));
    if (!s.ok()) return report_error(kExitFailure, s);
    std::printf("svg: %s\n", request.svg_path.c_str());
  }
  return kExitOk;
}

int run_profile(std::span<const std::string> args) {
  ProfileRequest request;
  if (absl::Status s = parse_profile_args(args, &request); !s.ok()) return usage_error(kProfileCommand, s);
  absl::StatusOr<ProfileDevice> device = parse_profile_device(request.device);
  if (!device.ok()) return report_error(kExitBadInput, device.status());
  absl::StatusOr<InputModule> input = read_input_module(request.input);
  if (!input.ok()) return report_error(kExitBadInput, input.status());
  if (absl::Status s = verify_input(*input); !s.ok()) return report_error(kExitBadInput, s);
  absl::StatusOr<const Kernel*> kernel = select_kernel(input->module, request.kernel, request.input);
  if (!kernel.ok()) return report_error(kExitBadInput, kernel.status());
  absl::StatusOr<std::vector<check::ScalarValue>> scalars =
      check::resolve_scalar_values(**kernel, request.settings);
  if (!scalars.ok()) return report_error(kExitBadInput, scalars.status());
  if (absl::Status s = eval_launch_shape(**kernel, check::integer_param_values(*scalars)).status(); !s.ok())
    return report_error(kExitBadInput, s);

  std::printf("kernel: %s\ndevice: %s\nsizes: %s\n", (*kernel)->name.c_str(),
              device->cuda ? absl::StrCat("cuda:", device->ordinal, " (instrumented lowering: cycle counter at every "
                                          "barrier wait and role wait)").c_str()
                           : "cpu (instrumented reference backend)",
              check::format_scalar_values(**kernel, *scalars).c_str());
  std::fflush(stdout);
  absl::StatusOr<profile::ProfileResult> result =
      device->cuda ? profile::profile_cuda_launch(**kernel, *scalars, request.options, device->ordinal)
                   : profile::profile_cpu_launch(**kernel, *scalars, request.options);
  if (!result.ok()) {
    bool bad_sizes = absl::IsResourceExhausted(result.status()) || absl::IsInvalidArgument(result.status());
    return report_error(bad_sizes ? kExitBadInput : kExitFailure, result.status());
  }
  return report(request, **kernel, *result);
}

}  // namespace

const Command kProfileCommand = {
    "profile",
    "time every barrier wait of a CPU or CUDA launch, per block and role",
    "usage: tilert profile IN [--kernel NAME] [--device cpu|cuda[:N]] [--set K=V ...]\n"
    "                         [--trace OUT.json] [--svg OUT.svg] [--repeat N] [--seed S]\n"
    "\n"
    "Runs one kernel of IN (.tile or .tbc) with the random inputs `tilert run` uses and times its\n"
    "synchronization. On the CPU backend the host clock is read around every barrier wait and\n"
    "arrive (block, named, cluster and subgroup barriers; mbarrier arrive, arrive_expect_tx and\n"
    "wait). On CUDA the kernel is lowered a second time with cycle-counter reads around every\n"
    "workgroup and named barrier wait (one lane per warp: \"subgroup-N\") and around the time each\n"
    "role of the merged role schedule could not proceed because its next mbarrier or named-barrier\n"
    "wait was unsatisfied (one lane per role); the first 64 blocks record. Prints, per role or\n"
    "lane, the waits, the time spent waiting, the busy time and the idle ratio\n"
    "wait / (wait + busy), then the cost of the instrumentation: the same launch timed with and\n"
    "without it.\n"
    "  --kernel NAME    the kernel to profile (default: the first)\n"
    "  --device SPEC    cpu (the default), cuda or cuda:N\n"
    "  --set K=V        a scalar parameter value (repeatable; also K=V,K=V)\n"
    "  --trace OUT      write a Chrome trace (Perfetto, chrome://tracing): pid = block, tid = role\n"
    "  --svg OUT        write an SVG timeline: one lane per block and role, waits hatched\n"
    "  --repeat N       time N launches of each kind and keep the fastest (default 3,\n"
    "                   after one untimed launch)\n"
    "  --seed S         seed of the random inputs (default 1)\n",
    run_profile,
};

}  // namespace tilert::cli
