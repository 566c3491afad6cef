// Modules built directly from the IR structs (independent of the text parser), and a tiny .tbc
// assembler for hand-written malformed inputs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "ir/kernel.h"

namespace tilert::testing {

// Two kernels that together use every op, every expression kind and every symbol kind.
Module sample_module();

// kernel k() grid(1) threads(32) { barrier } — 32 bytes of bytecode, laid out in the tests.
Module tiny_module();

// Magic, version, the given sections (id, payload), then a correct checksum section.
std::vector<uint8_t> assemble(std::initializer_list<std::pair<uint8_t, std::vector<uint8_t>>> sections);

// Recomputes the trailing checksum of writer output (whose last 6 bytes are the checksum section)
// after a test has altered bytes before it, so that deeper validation is what rejects them.
void fix_checksum(std::vector<uint8_t>& bytes);

}  // namespace tilert::testing
