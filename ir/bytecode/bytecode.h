// The .tbc bytecode: a compact, versioned, checksummed binary mirror of a Module.
// Format: ir/bytecode/README.md.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace tilert {

inline constexpr uint8_t kBytecodeMagic[4] = {'T', 'B', 'C', 0x01};
inline constexpr uint16_t kBytecodeVersion = 1;

// Serializes `module` deterministically: equal modules give identical bytes.
std::vector<uint8_t> write_bytecode(const Module& module);

// Reads and validates in one pass. Errors are InvalidArgument with the message
// "@0x0000001c: <what was expected>: <context>" naming the byte offset of the problem.
// Never crashes, never allocates more than the input can justify.
absl::StatusOr<Module> read_bytecode(std::span<const uint8_t> bytes);

// True when `bytes` starts with the .tbc magic (to tell .tbc from .tile input).
bool looks_like_bytecode(std::span<const uint8_t> bytes);

}  // namespace tilert
