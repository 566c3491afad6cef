// The emitters behind `tilert lower`: SIMT functions to a target's text or binary.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::cli {

struct LoweredOutput {
  std::string text;             // what is printed (PTX, LLVM IR, SPIR-V disassembly)
  std::vector<uint8_t> binary;  // SPIR-V words as bytes, written with -o unless --dis
};

// `disassemble`: SPIR-V as text. `isa`: AMDGCN machine code instead of LLVM IR, through LLVM's
// llc found on PATH (a test-time tool; the runtime compiles in-process with comgr).
absl::StatusOr<LoweredOutput> emit_lowered(std::span<const simt::Function> functions,
                                           const lowering::TargetDescription& target, bool disassemble,
                                           bool isa = false);

}  // namespace tilert::cli
