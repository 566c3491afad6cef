// `tilert profile --device cuda[:N]`: the kernel lowered twice for the device's PTX target, plain
// and with the lowering's sync instrumentation (lowering/sync_profile.h), both launched on the same
// seeded random inputs and timed on the host; the instrumented launch's record becomes the lanes
// of the same report the CPU profile prints.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "frontends/cli/profile_run.h"
#include "lowering/sync_profile.h"

namespace tilert::profile {

// Turns a decoded device record into report lanes: block coordinates from the linear index and
// `grid`, times relative to the earliest block start, waits named by their sync sites. Subgroup
// lanes are named "subgroup-N", role lanes by the role.
void add_device_lanes(const simt::Function& f, const std::vector<lowering::ProfiledLane>& lanes,
                      const int64_t grid[3], ProfileResult* result);

// Runs the profile on CUDA device `ordinal`. Errors: no driver or device (Unavailable, saying
// why), the same launch errors as `tilert run` (a deadlock, a timeout), sizes too large.
absl::StatusOr<ProfileResult> profile_cuda_launch(const Kernel& kernel, std::span<const check::ScalarValue> scalars,
                                                  const ProfileOptions& options, int ordinal);

}  // namespace tilert::profile
