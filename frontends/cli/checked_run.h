// One checked launch: seeded random inputs, a run on a device through the public C API, the CPU
// float64 reference on the same inputs, and an element-wise comparison of every tensor.
// Used by `tilert run` and by the cross-backend conformance harness.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "frontends/cli/api_handles.h"
#include "frontends/cli/scalar_values.h"
#include "frontends/cli/tensor_compare.h"
#include "ir/kernel.h"
#include "tilert/tilert.h"

namespace tilert::check {

struct CheckOptions {
  uint64_t seed = 1;
  bool compare = true;     // run the float64 reference and compare every tensor
  int bench_launches = 0;  // timed launches after the checked one
  int warmup_ms = 0;       // untimed launches for this long before the timed ones
  // Run the CPU reference with race checking (cpu::RunOptions::check_races) before launching;
  // a race fails the run with its DataLoss status.
  bool check_races = false;
};

struct CheckedRun {
  double launch_seconds = 0.0;        // the first launch, up to its stream sync
  std::vector<double> bench_seconds;  // one per bench launch
  int64_t tolerance_depth = 1;
  // One per tensor parameter, in signature order (empty without options.compare). Inputs are
  // compared too: a kernel must leave them unchanged, and the reference shows whether it did.
  std::vector<TensorComparison> comparisons;

  bool passed() const;
};

// Total tensor elements a run accepts (inputs live in host memory twice, once as f64: about
// 5 GiB at the limit, enough for 8192^3 gemms and (4, 32, 4096, 128) attention).
inline constexpr int64_t kMaxCheckedElements = int64_t{1} << 29;

// Runs `kernel` (the IR of `kernel_handle`, loaded on `device`) with `scalars` (one per parameter,
// see resolve_scalar_values). Errors: launch shapes that do not evaluate, tensors too large, any
// failing C API call (naming it), a failing reference run. A result outside tolerance is not an
// error: it is reported in the comparisons.
absl::StatusOr<CheckedRun> checked_run(tilert_context context, tilert_device device,
                                       tilert_kernel kernel_handle, const Kernel& kernel,
                                       std::span<const ScalarValue> scalars,
                                       const CheckOptions& options);

// Loads `module` onto `device` through its bytecode (what a deployed program ships).
absl::StatusOr<cli::ModuleHandle> load_module(tilert_context context, tilert_device device,
                                              const Module& module);

// "min 1.20 ms, median 1.31 ms" of the given times.
std::string format_bench(std::span<const double> seconds);

}  // namespace tilert::check
