// The profiled launch behind `tilert profile`: seeded random inputs (as `tilert run` draws them),
// then the same launch without and with the sync instrumentation, each timed on the host, so the
// trace comes with the overhead it cost. On the CPU backend the instrumentation is its sync trace
// (backends/cpu/sync_trace.h); on a GPU it is the lowering's (lowering/sync_profile.h, see
// profile_gpu.h).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cpu/cpu_backend.h"
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
  // The trace of the last instrumented launch (CPU), or the lanes a GPU launch recorded; either
  // way lanes() are the report's input.
  std::unique_ptr<cpu::SyncTrace> trace;
  std::deque<cpu::SyncLane> device_lanes;
  int64_t dropped_waits = 0;  // GPU: waits past the record's room, missing from the lanes
  double instrumented_seconds = 0.0;
  double uninstrumented_seconds = 0.0;
  int repeat = 1;

  // Extra time the instrumentation cost, relative to the uninstrumented launch (0.05: 5%).
  double overhead() const;
  std::vector<const cpu::SyncLane*> lanes() const;
};

// The launch's tensors in host memory, one per tensor parameter.
struct HostTensors {
  std::vector<std::vector<uint8_t>> bytes;  // by parameter position (empty for scalars)
  std::vector<cpu::ArgValue> args;
};

// Seeded random inputs for every tensor parameter, in the value ranges `tilert run` uses, so a
// profile sees the control flow a run does. ResourceExhausted past kMaxProfiledElements.
absl::StatusOr<HostTensors> make_profile_inputs(const Kernel& kernel, std::span<const check::ScalarValue> scalars,
                                                uint64_t seed);

// Total tensor elements a profiled launch accepts: the CPU backend interprets every element.
inline constexpr int64_t kMaxProfiledElements = int64_t{1} << 26;

// Runs `kernel` with `scalars` (one per parameter, see check::resolve_scalar_values). Errors:
// launch shapes that do not evaluate, tensors too large (ResourceExhausted), a failing launch
// (its status: a deadlock, an out-of-bounds access), another trace recording.
absl::StatusOr<ProfileResult> profile_cpu_launch(const Kernel& kernel,
                                                 std::span<const check::ScalarValue> scalars,
                                                 const ProfileOptions& options);

}  // namespace tilert::profile
