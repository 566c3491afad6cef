// The SPIR-V instructions the builder can emit: one table row per opcode with its result form
// and operand kinds, so encoding and id checking are driven by the table and an opcode without
// a row is refused with an error rather than emitted blindly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include <spirv/unified1/spirv.hpp11>

namespace tilert::spirv {

using Id = uint32_t;

// Whether an instruction has <result type> <result id> words before its operands.
enum class ResultForm : uint8_t {
  kNone,        // OpStore, OpBranch, ...
  kResult,      // types, OpLabel, OpExtInstImport: <result id>
  kTypedResult  // values: <result type> <result id>
};

// One row of the table. `operands` spells the operand words after the result words:
//   'I' an <id>, 'L' one literal word, 'S' a nul-terminated literal string (1+ words);
//   a trailing '*' repeats the previous kind zero or more times, '?' makes it optional.
struct InstructionInfo {
  spv::Op op;
  std::string_view name;
  ResultForm result;
  std::string_view operands;
  bool terminates_block;
};

// The row for `op`, or nullptr when the builder does not know the opcode.
const InstructionInfo* instruction_info(spv::Op op);

// Where the ids of an instruction are. `words` are the instruction's words after the opcode
// word (result type and result id included). Fails when the words do not match the row.
struct OperandIds {
  Id result_type = 0;
  Id result = 0;
  std::vector<Id> used;  // every id operand (the result type included)
};
absl::StatusOr<OperandIds> decode_ids(const InstructionInfo& info, std::span<const uint32_t> words);

// Appends `text` as a SPIR-V literal string: UTF-8 bytes, a nul, zero padding to a word.
void append_string(std::vector<uint32_t>& words, std::string_view text);

// The instruction's first word: word count in the high 16 bits, opcode in the low 16.
inline uint32_t instruction_header(spv::Op op, size_t word_count) {
  return static_cast<uint32_t>(word_count << 16) | static_cast<uint32_t>(op);
}

}  // namespace tilert::spirv
