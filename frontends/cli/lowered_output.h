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

absl::StatusOr<LoweredOutput> emit_lowered(std::span<const simt::Function> functions,
                                           const lowering::TargetDescription& target, bool disassemble);

}  // namespace tilert::cli
