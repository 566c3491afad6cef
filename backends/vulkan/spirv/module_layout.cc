// ModuleBuilder::finish: the final checks and the module's words in the logical layout order of
// the SPIR-V specification (section 2.4).
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/module_builder.h"
#include "ir/status.h"

namespace tilert::spirv {
namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kGenerator = 0;  // no registered generator id
constexpr uint32_t kSchema = 0;

void append(std::vector<uint32_t>& out, spv::Op op, const std::vector<uint32_t>& words) {
  out.push_back(instruction_header(op, words.size() + 1));
  out.insert(out.end(), words.begin(), words.end());
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> ModuleBuilder::finish() const {
  RETURN_IF_ERROR(status_);
  if (!memory_model_) {
    return absl::FailedPreconditionError("module has no memory model: call set_memory_model");
  }
  if (!functions_.empty() && !functions_.back().ended) {
    return absl::FailedPreconditionError(absl::StrCat(
        "function ", describe(functions_.back().definition.words[1]),
        " is still open: call end_function"));
  }

  // Every id an instruction uses must be the result of some instruction (forward references,
  // as to a later block or function, are fine).
  auto check_ids = [&](const Instruction& inst, std::string_view where) -> absl::Status {
    const InstructionInfo* info = instruction_info(inst.op);
    ASSIGN_OR_RETURN(OperandIds ids, decode_ids(*info, inst.words));
    for (Id used : ids.used) {
      if (!defined_.contains(used)) {
        return absl::FailedPreconditionError(absl::StrCat(
            av(info->name), av(where), " uses ", describe(used), ", which no instruction defines"));
      }
    }
    return absl::OkStatus();
  };
  for (const auto* section : {&entry_points_, &execution_modes_, &debug_names_, &annotations_,
                              &types_constants_globals_}) {
    for (const Instruction& inst : *section) RETURN_IF_ERROR(check_ids(inst, ""));
  }
  for (const Function& function : functions_) {
    std::string in_function = absl::StrCat(" in function ", describe(function.definition.words[1]));
    RETURN_IF_ERROR(check_ids(function.definition, in_function));
    for (const Instruction& inst : function.parameters) RETURN_IF_ERROR(check_ids(inst, in_function));
    for (const Instruction& inst : function.variables) RETURN_IF_ERROR(check_ids(inst, in_function));
    for (const Block& block : function.blocks) {
      std::string in_block = absl::StrCat(" in block ", describe(block.label), in_function);
      for (const Instruction& inst : block.instructions) RETURN_IF_ERROR(check_ids(inst, in_block));
    }
  }

  std::vector<uint32_t> out = {kMagic, version_, kGenerator, next_id_, kSchema};
  for (uint32_t capability : capabilities_) append(out, spv::Op::OpCapability, {capability});
  for (const std::string& extension : extensions_) {
    std::vector<uint32_t> words;
    append_string(words, extension);
    append(out, spv::Op::OpExtension, words);
  }
  for (const auto& [name, id] : ext_imports_) {
    std::vector<uint32_t> words = {id};
    append_string(words, name);
    append(out, spv::Op::OpExtInstImport, words);
  }
  append(out, memory_model_->op, memory_model_->words);
  for (const auto* section : {&entry_points_, &execution_modes_, &debug_names_, &annotations_,
                              &types_constants_globals_}) {
    for (const Instruction& inst : *section) append(out, inst.op, inst.words);
  }
  for (const Function& function : functions_) {
    append(out, function.definition.op, function.definition.words);
    for (const Instruction& inst : function.parameters) append(out, inst.op, inst.words);
    for (size_t b = 0; b < function.blocks.size(); ++b) {
      const Block& block = function.blocks[b];
      append(out, spv::Op::OpLabel, {block.label});
      // Function-storage variables must open the first block.
      if (b == 0) {
        for (const Instruction& inst : function.variables) append(out, inst.op, inst.words);
      }
      for (const Instruction& inst : block.instructions) append(out, inst.op, inst.words);
    }
    append(out, spv::Op::OpFunctionEnd, {});
  }
  return out;
}

}  // namespace tilert::spirv
