// SPIR-V module builder: section bookkeeping, de-duplication and the final layout.
#include "backends/vulkan/spirv/module_builder.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "ir/status.h"

namespace tilert::spirv {
namespace {

uint32_t word(auto e) { return static_cast<uint32_t>(e); }

}  // namespace

void ModuleBuilder::fail(std::string message) {
  if (status_.ok()) status_ = absl::FailedPreconditionError(std::move(message));
}

std::string ModuleBuilder::describe(Id id) const { return absl::StrCat("%", id); }

std::optional<ModuleBuilder::Instruction> ModuleBuilder::make(spv::Op op, Id result_type,
                                                              Id result,
                                                              std::vector<uint32_t> operands) {
  if (!status_.ok()) return std::nullopt;
  const InstructionInfo* info = instruction_info(op);
  if (info == nullptr) {
    fail(absl::StrCat("opcode ", word(op), " has no row in the SPIR-V instruction table"));
    return std::nullopt;
  }
  Instruction inst{op, {}};
  inst.words.reserve(2 + operands.size());  // one allocation, not one per word pushed
  if (info->result == ResultForm::kTypedResult) inst.words.push_back(result_type);
  if (info->result != ResultForm::kNone) inst.words.push_back(result);
  inst.words.insert(inst.words.end(), operands.begin(), operands.end());
  absl::StatusOr<OperandIds> ids = decode_ids(*info, inst.words);
  if (!ids.ok()) {
    fail(std::string(ids.status().message()));
    return std::nullopt;
  }
  if (info->result != ResultForm::kNone) {
    if (result == 0 || result >= next_id_) {
      fail(absl::StrCat(av(info->name), ": result ", describe(result),
                        " was not handed out by new_id()"));
      return std::nullopt;
    }
    if (!defined_.insert(result).second) {
      fail(absl::StrCat(av(info->name), ": ", describe(result), " is already defined"));
      return std::nullopt;
    }
  }
  return inst;
}

Id ModuleBuilder::intern(spv::Op op, Id result_type, std::vector<uint32_t> operands,
                         uint32_t extra_key) {
  std::vector<uint32_t> key = {word(op), result_type, extra_key};
  key.insert(key.end(), operands.begin(), operands.end());
  if (auto it = interned_.find(key); it != interned_.end()) return it->second;
  Id id = new_id();
  std::optional<Instruction> inst = make(op, result_type, id, std::move(operands));
  if (!inst) return 0;
  types_constants_globals_.push_back(std::move(*inst));
  interned_.emplace(std::move(key), id);
  return id;
}

// ---- module-level declarations ----

void ModuleBuilder::add_capability(spv::Capability capability) {
  capabilities_.insert(word(capability));
}

void ModuleBuilder::add_extension(std::string_view name) {
  if (std::find(extensions_.begin(), extensions_.end(), name) == extensions_.end()) {
    extensions_.emplace_back(name);
  }
}

Id ModuleBuilder::import_ext_inst(std::string_view set_name) {
  if (auto it = ext_imports_.find(set_name); it != ext_imports_.end()) return it->second;
  Id id = new_id();
  defined_.insert(id);
  ext_imports_.emplace(std::string(set_name), id);
  return id;
}

void ModuleBuilder::set_memory_model(spv::AddressingModel addressing, spv::MemoryModel memory) {
  if (memory_model_) return fail("set_memory_model: the memory model is already set");
  memory_model_ = make(spv::Op::OpMemoryModel, 0, 0, {word(addressing), word(memory)});
}

void ModuleBuilder::add_entry_point(spv::ExecutionModel model, Id function, std::string_view name,
                                    const std::vector<Id>& interface) {
  std::vector<uint32_t> operands = {word(model), function};
  append_string(operands, name);
  operands.insert(operands.end(), interface.begin(), interface.end());
  if (auto inst = make(spv::Op::OpEntryPoint, 0, 0, std::move(operands))) {
    entry_points_.push_back(std::move(*inst));
  }
}

void ModuleBuilder::add_execution_mode(Id function, spv::ExecutionMode mode,
                                       const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> operands = {function, word(mode)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  if (auto inst = make(spv::Op::OpExecutionMode, 0, 0, std::move(operands))) {
    execution_modes_.push_back(std::move(*inst));
  }
}

void ModuleBuilder::set_local_size(Id function, uint32_t x, uint32_t y, uint32_t z) {
  add_execution_mode(function, spv::ExecutionMode::LocalSize, {x, y, z});
}

void ModuleBuilder::set_name(Id target, std::string_view name) {
  std::vector<uint32_t> operands = {target};
  append_string(operands, name);
  if (auto inst = make(spv::Op::OpName, 0, 0, std::move(operands))) {
    debug_names_.push_back(std::move(*inst));
  }
}

void ModuleBuilder::set_member_name(Id struct_type, uint32_t member, std::string_view name) {
  std::vector<uint32_t> operands = {struct_type, member};
  append_string(operands, name);
  if (auto inst = make(spv::Op::OpMemberName, 0, 0, std::move(operands))) {
    debug_names_.push_back(std::move(*inst));
  }
}

void ModuleBuilder::decorate(Id target, spv::Decoration decoration,
                             const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> operands = {target, word(decoration)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  std::vector<uint32_t> key = operands;
  key.insert(key.begin(), word(spv::Op::OpDecorate));
  if (!annotation_keys_.insert(key).second) return;
  if (auto inst = make(spv::Op::OpDecorate, 0, 0, std::move(operands))) {
    annotations_.push_back(std::move(*inst));
  }
}

void ModuleBuilder::decorate_member(Id struct_type, uint32_t member, spv::Decoration decoration,
                                    const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> operands = {struct_type, member, word(decoration)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  std::vector<uint32_t> key = operands;
  key.insert(key.begin(), word(spv::Op::OpMemberDecorate));
  if (!annotation_keys_.insert(key).second) return;
  if (auto inst = make(spv::Op::OpMemberDecorate, 0, 0, std::move(operands))) {
    annotations_.push_back(std::move(*inst));
  }
}

// ---- types, constants, globals ----

Id ModuleBuilder::type_void() { return intern(spv::Op::OpTypeVoid, 0, {}); }
Id ModuleBuilder::type_bool() { return intern(spv::Op::OpTypeBool, 0, {}); }
Id ModuleBuilder::type_int(uint32_t width, bool is_signed) {
  return intern(spv::Op::OpTypeInt, 0, {width, is_signed ? 1u : 0u});
}
Id ModuleBuilder::type_float(uint32_t width) { return intern(spv::Op::OpTypeFloat, 0, {width}); }
Id ModuleBuilder::type_bfloat16() {
  return intern(spv::Op::OpTypeFloat, 0, {16, bfloat16::kEncodingBFloat16});
}
Id ModuleBuilder::type_vector(Id component, uint32_t count) {
  return intern(spv::Op::OpTypeVector, 0, {component, count});
}

Id ModuleBuilder::type_array(Id element, uint32_t length, uint32_t array_stride) {
  Id length_id = constant_u32(length);
  std::vector<uint32_t> key = {word(spv::Op::OpTypeArray), element, length_id, array_stride};
  bool is_new = interned_.find(key) == interned_.end();
  Id id = intern(spv::Op::OpTypeArray, 0, {element, length_id}, array_stride);
  if (is_new && id != 0 && array_stride != 0) {
    decorate(id, spv::Decoration::ArrayStride, {array_stride});
  }
  return id;
}

Id ModuleBuilder::type_runtime_array(Id element, uint32_t array_stride) {
  Id id = intern(spv::Op::OpTypeRuntimeArray, 0, {element}, array_stride);
  if (id != 0 && array_stride != 0) decorate(id, spv::Decoration::ArrayStride, {array_stride});
  return id;
}

Id ModuleBuilder::type_struct(const std::vector<Id>& members) {
  Id id = new_id();
  if (auto inst = make(spv::Op::OpTypeStruct, 0, id, members)) {
    types_constants_globals_.push_back(std::move(*inst));
    return id;
  }
  return 0;
}

Id ModuleBuilder::type_pointer(spv::StorageClass storage, Id pointee) {
  return intern(spv::Op::OpTypePointer, 0, {word(storage), pointee});
}

Id ModuleBuilder::type_function(Id return_type, const std::vector<Id>& parameters) {
  std::vector<uint32_t> operands = {return_type};
  operands.insert(operands.end(), parameters.begin(), parameters.end());
  return intern(spv::Op::OpTypeFunction, 0, std::move(operands));
}

Id ModuleBuilder::type_cooperative_matrix(Id component, spv::Scope scope, uint32_t rows,
                                          uint32_t columns, uint32_t use) {
  std::vector<uint32_t> operands = {component, constant_u32(word(scope)), constant_u32(rows),
                                    constant_u32(columns), constant_u32(use)};
  return intern(cooperative_matrix::kOpTypeCooperativeMatrix, 0, std::move(operands));
}

Id ModuleBuilder::type_tensor_layout(uint32_t dimensions, uint32_t clamp_mode) {
  return intern(tensor_addressing::kOpTypeTensorLayout, 0, {constant_u32(dimensions), constant_u32(clamp_mode)});
}

Id ModuleBuilder::constant(Id type, const std::vector<uint32_t>& literal_words) {
  return intern(spv::Op::OpConstant, type, literal_words);
}
Id ModuleBuilder::constant_u32(uint32_t value) { return constant(type_int(32, false), {value}); }
Id ModuleBuilder::constant_i32(int32_t value) {
  return constant(type_int(32, true), {static_cast<uint32_t>(value)});
}
Id ModuleBuilder::constant_f32(float value) {
  return constant(type_float(32), {std::bit_cast<uint32_t>(value)});
}
Id ModuleBuilder::constant_f16_bits(uint16_t bits) { return constant(type_float(16), {bits}); }
Id ModuleBuilder::constant_bool(bool value) {
  return intern(value ? spv::Op::OpConstantTrue : spv::Op::OpConstantFalse, type_bool(), {});
}
Id ModuleBuilder::constant_composite(Id type, const std::vector<Id>& parts) {
  return intern(spv::Op::OpConstantComposite, type, parts);
}

Id ModuleBuilder::spec_constant(Id type, uint32_t spec_id, uint32_t default_word) {
  Id id = new_id();
  if (auto inst = make(spv::Op::OpSpecConstant, type, id, {default_word})) {
    types_constants_globals_.push_back(std::move(*inst));
    decorate(id, spv::Decoration::SpecId, {spec_id});
    return id;
  }
  return 0;
}

Id ModuleBuilder::global_variable(Id pointer_type, spv::StorageClass storage) {
  if (storage == spv::StorageClass::Function) {
    fail("global_variable: Function storage belongs in a function (use local_variable)");
    return 0;
  }
  Id id = new_id();
  if (auto inst = make(spv::Op::OpVariable, pointer_type, id, {word(storage)})) {
    types_constants_globals_.push_back(std::move(*inst));
    return id;
  }
  return 0;
}

// ---- functions and blocks ----

ModuleBuilder::Function* ModuleBuilder::open_function(std::string_view what) {
  if (!status_.ok()) return nullptr;
  if (functions_.empty() || functions_.back().ended) {
    fail(absl::StrCat(av(what), " outside a function: call begin_function first"));
    return nullptr;
  }
  return &functions_.back();
}

ModuleBuilder::Block* ModuleBuilder::open_block(std::string_view what) {
  Function* function = open_function(what);
  if (function == nullptr) return nullptr;
  if (function->blocks.empty()) {
    fail(absl::StrCat(av(what), " outside a block: call begin_block first"));
    return nullptr;
  }
  Block& block = function->blocks.back();
  if (block.terminated) {
    fail(absl::StrCat(av(what), " after the terminator of block ", describe(block.label),
                      ": call begin_block first"));
    return nullptr;
  }
  return &block;
}

Id ModuleBuilder::begin_function(Id return_type, Id function_type,
                                 spv::FunctionControlMask control) {
  if (!functions_.empty() && !functions_.back().ended) {
    fail(absl::StrCat("begin_function: function ", describe(functions_.back().definition.words[1]),
                      " is still open (call end_function)"));
    return 0;
  }
  Id id = new_id();
  std::optional<Instruction> inst =
      make(spv::Op::OpFunction, return_type, id, {word(control), function_type});
  if (!inst) return 0;
  functions_.push_back(Function{std::move(*inst), {}, {}, {}, false});
  return id;
}

Id ModuleBuilder::function_parameter(Id type) {
  Function* function = open_function("OpFunctionParameter");
  if (function == nullptr) return 0;
  if (!function->blocks.empty()) {
    fail("OpFunctionParameter after the function's first block");
    return 0;
  }
  Id id = new_id();
  if (auto inst = make(spv::Op::OpFunctionParameter, type, id, {})) {
    function->parameters.push_back(std::move(*inst));
    return id;
  }
  return 0;
}

Id ModuleBuilder::begin_block(Id label) {
  Function* function = open_function("OpLabel");
  if (function == nullptr) return 0;
  if (!function->blocks.empty() && !function->blocks.back().terminated) {
    fail(absl::StrCat("block ", describe(function->blocks.back().label),
                      " has no terminator (OpBranch, OpReturn, ...) before the next block"));
    return 0;
  }
  if (label == 0) label = new_id();
  if (!make(spv::Op::OpLabel, 0, label, {})) return 0;
  function->blocks.push_back(Block{label, {}, false});
  return label;
}

Id ModuleBuilder::local_variable(Id pointer_type) {
  if (open_block("OpVariable") == nullptr) return 0;
  Id id = new_id();
  if (auto inst =
          make(spv::Op::OpVariable, pointer_type, id, {word(spv::StorageClass::Function)})) {
    functions_.back().variables.push_back(std::move(*inst));
    return id;
  }
  return 0;
}

Id ModuleBuilder::emit(spv::Op op, Id result_type, const std::vector<uint32_t>& operands) {
  const InstructionInfo* info = instruction_info(op);
  std::string what = info ? std::string(info->name) : absl::StrCat("opcode ", word(op));
  Block* block = open_block(what);
  if (block == nullptr) return 0;
  if (info != nullptr && (op == spv::Op::OpVariable || op == spv::Op::OpFunction ||
                          op == spv::Op::OpLabel || op == spv::Op::OpFunctionEnd ||
                          op == spv::Op::OpFunctionParameter)) {
    fail(absl::StrCat(av(info->name), " has its own builder call; emit() does not take it"));
    return 0;
  }
  Id result = info != nullptr && info->result != ResultForm::kNone ? new_id() : 0;
  std::optional<Instruction> inst = make(op, result_type, result, operands);
  if (!inst) return 0;
  block->instructions.push_back(std::move(*inst));
  if (info->terminates_block) block->terminated = true;
  return result;
}

void ModuleBuilder::end_function() {
  Function* function = open_function("OpFunctionEnd");
  if (function == nullptr) return;
  Id id = function->definition.words[1];
  if (function->blocks.empty()) {
    return fail(absl::StrCat("function ", describe(id), " has no blocks"));
  }
  if (!function->blocks.back().terminated) {
    return fail(absl::StrCat("function ", describe(id), ": block ",
                             describe(function->blocks.back().label),
                             " has no terminator (OpBranch, OpReturn, ...)"));
  }
  function->ended = true;
}

Id ModuleBuilder::access_chain(Id pointer_type, Id base, const std::vector<Id>& indices) {
  std::vector<uint32_t> operands = {base};
  operands.insert(operands.end(), indices.begin(), indices.end());
  return emit(spv::Op::OpAccessChain, pointer_type, operands);
}

Id ModuleBuilder::ext_inst(Id type, Id set, uint32_t instruction, const std::vector<Id>& arguments) {
  std::vector<uint32_t> operands = {set, instruction};
  operands.insert(operands.end(), arguments.begin(), arguments.end());
  return emit(spv::Op::OpExtInst, type, operands);
}

void ModuleBuilder::selection_merge(Id merge_block) {
  emit_void(spv::Op::OpSelectionMerge, {merge_block, word(spv::SelectionControlMask::MaskNone)});
}

void ModuleBuilder::loop_merge(Id merge_block, Id continue_block) {
  emit_void(spv::Op::OpLoopMerge,
            {merge_block, continue_block, word(spv::LoopControlMask::MaskNone)});
}

void ModuleBuilder::control_barrier(spv::Scope execution, spv::Scope memory,
                                    spv::MemorySemanticsMask semantics) {
  Id execution_id = constant_u32(word(execution));
  Id memory_id = constant_u32(word(memory));
  Id semantics_id = constant_u32(word(semantics));
  emit_void(spv::Op::OpControlBarrier, {execution_id, memory_id, semantics_id});
}

}  // namespace tilert::spirv
