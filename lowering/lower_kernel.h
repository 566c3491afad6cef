// The shared lowering: one verified tile-IR kernel to the SIMT IR (lowering/simt.h) for a target
// description. Every GPU backend calls this and then its own emitter; see lowering/README.md for
// how tiles are laid out over threads and how synchronization is lowered.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::lowering {

struct LowerOptions {
  // Instrument every barrier wait and the roles' waits with cycle-counter reads recorded in one
  // more parameter (lowering/sync_profile.h). Off: the lowering is exactly the plain one.
  bool sync_profile = false;
  // Prefer warpgroup plans (wgmma, lowering/matrix_plan.h) for gemms on targets that have them.
  // The CUDA runtime turns this on (tests/bench/RESULTS.md: ~1.4x the mma.sync path on the H200).
  bool warpgroup_mma = false;
  // Let the tensor-copy engine (TMA) fill pipelined loops' swizzled tiles on targets that have it
  // (lowering/lower_tensor_copy.cc). The function then takes tensor maps the launch must encode
  // (simt::Function::tensor_maps), which the CUDA runtime does; off for launchers that do not.
  bool tensor_copies = false;
};

// Lowers `kernel` (verified, capabilities already checked) for `target`. The result's parameters
// are the kernel's, in signature order (tensors as global arrays, scalars as scalars), followed by
// the status record (Function::status_param) and, when profiling, the sync profile record. Errors: ResourceExhausted when the kernel's shared
// memory (with the lowering's own scratch) exceeds the target's; Unimplemented, naming the kernel
// and source line, for a construct this lowering cannot map to the target.
absl::StatusOr<simt::Function> lower_kernel(const Kernel& kernel, const TargetDescription& target,
                                            const LowerOptions& options = {});

// The error a launch reports for the status record the kernel wrote (kStatusWords words): OK for
// kOk; Aborted "kernel K: deadlock: role R waits on B at line L [and ...], which nothing can
// complete (block (x, y))"
// for kDeadlock; Internal for a code this build does not know.
absl::Status status_record_error(const simt::Function& function, std::span<const uint32_t> words);

}  // namespace tilert::lowering
