// The profiled launch behind `tilert profile`: seeded random inputs (as `tilert run` draws them),
// then the same launch on the CPU backend without and with the sync trace (backends/cpu/
// sync_trace.h), each timed on the host, so the trace comes with the overhead it cost.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cpu/sync_trace.h"
#include "frontends/cli/scalar_values.h"
#include "ir/kernel.h"

namespace tilert::profile {

struct ProfileOptions {
  uint64_t seed = 1;
  int repeat = 3;       // timed launches of each kind (after one untimed); the fastest counts
  int num_threads = 0;  // host threads for blocks (cpu::RunOptions::num_threads)
};

struct ProfileResult {
  // The trace of the last instrumented launch; its lanes are the report's input.
  std::unique_ptr<cpu::SyncTrace> trace;
  double instrumented_seconds = 0.0;
  double uninstrumented_seconds = 0.0;
  int repeat = 1;

  // Extra time the instrumentation cost, relative to the uninstrumented launch (0.05: 5%).
  double overhead() const;
};

// Total tensor elements a profiled launch accepts: the CPU backend interprets every element.
inline constexpr int64_t kMaxProfiledElements = int64_t{1} << 26;

// Runs `kernel` with `scalars` (one per parameter, see check::resolve_scalar_values). Errors:
// launch shapes that do not evaluate, tensors too large (ResourceExhausted), a failing launch
// (its status: a deadlock, an out-of-bounds access), another trace recording.
absl::StatusOr<ProfileResult> profile_cpu_launch(const Kernel& kernel,
                                                 std::span<const check::ScalarValue> scalars,
                                                 const ProfileOptions& options);

}  // namespace tilert::profile
