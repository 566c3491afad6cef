// The targets the lowering oracle test covers and, for each, the external check of what the
// emitter makes of a lowered function: SPIRV-Tools' validator (in process), ptxas, or llc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::oracles {

enum class Oracle { kSpirvValidator, kPtxas, kLlc };

// One (target, tool) configuration: `target` is what lower_kernel receives.
struct OracleTarget {
  std::string label;  // e.g. "amdgcn:gfx1100 wave32 llc-16"
  lowering::TargetDescription target;
  Oracle oracle = Oracle::kSpirvValidator;
  std::string tool;   // "llc-14" / "llc-16" for kLlc
  int wave_size = 0;  // for kLlc
};

// Every configuration, built from the predefined targets. Vulkan targets get a desktop profile
// (48 KiB shared memory, 1024 threads, subgroups of 32, subgroup arithmetic and 16-bit types)
// instead of the specification minimums.
std::vector<OracleTarget> oracle_targets();

// The outcome of emitting and checking one lowered function.
struct OracleResult {
  enum Kind { kPassed, kFailed, kSkipped } kind = kFailed;
  std::string first_error;  // the first error line (kFailed) or why the tool was missing
  std::string full_output;  // everything the emitter or tool said (kFailed)
};
OracleResult check_with_oracle(const simt::Function& f, const OracleTarget& t);

}  // namespace tilert::oracles
