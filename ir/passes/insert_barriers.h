// Automatic block-barrier insertion: a target-neutral pass that places `barrier` wherever one tile
// op or thread-level statement touches shared memory (or a global tensor) that an earlier one in
// the same block touched, with at least one of them writing (RAW, WAR, WAW). See README.md.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace tilert {

struct BarrierReport {
  std::string kernel;
  int inserted = 0;                 // barriers the pass added
  int removed = 0;                  // hand-written barriers found redundant and removed
  std::vector<uint32_t> removed_lines;  // their source lines (0: unknown)
};

// Inserts the fewest block barriers the kernel needs and removes redundant hand-written ones.
// Errors (InvalidArgument) when a dependency lies entirely under thread-dependent control flow,
// where no block barrier may go; the kernel is left unchanged then.
absl::StatusOr<BarrierReport> insert_barriers(Kernel& kernel);

// Every kernel of the module, in order; stops at the first error.
absl::StatusOr<std::vector<BarrierReport>> insert_barriers(Module& module);

}  // namespace tilert
