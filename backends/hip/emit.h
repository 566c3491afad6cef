// The AMDGCN emitter: one SIMT-IR function (lowering/simt.h) to textual LLVM IR for the
// amdgcn-amd-amdhsa triple, which comgr (backends/hip/comgr.h) or llc compiles to a code object.
// See backends/hip/README.md for how the SIMT IR maps onto AMD GPUs and which LLVM versions read
// the output.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::hip {

// Textual LLVM IR holding one `amdgpu_kernel` named f.name. `target` must be an amdgcn target
// (gfx90a, gfx940, gfx1100, ...) and `wave_size` one of its subgroup sizes. Errors:
// InvalidArgument for a non-amdgcn target, a wave size the target cannot run or malformed
// SIMT IR (an id out of range, a wrong operand count); Unimplemented for constructs AMD GPUs
// lack (named barriers) or this emitter does not provide (f64 transcendentals).
absl::StatusOr<std::string> emit_amdgcn_llvm_ir(const simt::Function& f,
                                                const lowering::TargetDescription& target,
                                                int wave_size);

}  // namespace tilert::hip
