// A builder of SPIR-V binary modules for compute shaders. It hands out ids, de-duplicates types
// and constants, keeps each instruction in its section of the module and emits the sections in
// the order of the specification's logical layout (section 2.4): capabilities, extensions,
// ext-inst imports, memory model, entry points, execution modes, debug names, annotations,
// types / constants / global variables, function definitions.
//
// Misuse (an instruction outside a block or after its terminator, a block left without a
// terminator, an id used but never defined, an opcode the instruction table lacks, operands that
// do not match the opcode's row) is recorded as the builder's first error; later calls are
// harmless no-ops returning id 0, and finish() returns the error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/vulkan/spirv/instructions.h"

namespace tilert::spirv {

inline constexpr uint32_t kSpirvVersion1_5 = 0x00010500;  // Vulkan 1.2's newest
inline constexpr uint32_t kSpirvVersion1_6 = 0x00010600;  // Vulkan 1.3's newest

class ModuleBuilder {
 public:
  explicit ModuleBuilder(uint32_t spirv_version = kSpirvVersion1_5) : version_(spirv_version) {}

  // Reserves an id to be defined later (a block label a branch jumps forward to).
  Id new_id() { return next_id_++; }

  // Module-level declarations. Capabilities, extensions and imports are de-duplicated.
  void add_capability(spv::Capability capability);
  void add_extension(std::string_view name);
  Id import_ext_inst(std::string_view set_name);  // e.g. "GLSL.std.450"
  void set_memory_model(spv::AddressingModel addressing, spv::MemoryModel memory);
  void add_entry_point(spv::ExecutionModel model, Id function, std::string_view name,
                       const std::vector<Id>& interface);
  void add_execution_mode(Id function, spv::ExecutionMode mode, const std::vector<uint32_t>& literals);
  void set_local_size(Id function, uint32_t x, uint32_t y, uint32_t z);
  void set_name(Id target, std::string_view name);
  void set_member_name(Id struct_type, uint32_t member, std::string_view name);
  // Exact repeats of a decoration are dropped.
  void decorate(Id target, spv::Decoration decoration, const std::vector<uint32_t>& literals = {});
  void decorate_member(Id struct_type, uint32_t member, spv::Decoration decoration,
                       const std::vector<uint32_t>& literals = {});

  // Types, de-duplicated. An explicit array stride is part of an array type's identity (a
  // storage-buffer array carries ArrayStride, a workgroup array must not), so the builder adds
  // the decoration itself. Structs are never merged: their members carry decorations.
  Id type_void();
  Id type_bool();
  Id type_int(uint32_t width, bool is_signed);
  Id type_float(uint32_t width);
  // OpTypeFloat 16 BFloat16KHR (SPV_KHR_bfloat16; the caller declares its capabilities).
  Id type_bfloat16();
  Id type_vector(Id component, uint32_t count);
  Id type_array(Id element, uint32_t length, uint32_t array_stride = 0);
  Id type_runtime_array(Id element, uint32_t array_stride);
  Id type_struct(const std::vector<Id>& members);
  Id type_pointer(spv::StorageClass storage, Id pointee);
  Id type_function(Id return_type, const std::vector<Id>& parameters = {});
  // OpTypeCooperativeMatrixKHR (SPV_KHR_cooperative_matrix): `scope`, `rows`, `columns` and
  // `use` become u32 constants, as the type takes them by id.
  Id type_cooperative_matrix(Id component, spv::Scope scope, uint32_t rows, uint32_t columns,
                             uint32_t use);

  // OpTypeTensorLayoutNV (SPV_NV_tensor_addressing): `dimensions` and `clamp_mode` become u32
  // constants, as the type takes them by id.
  Id type_tensor_layout(uint32_t dimensions, uint32_t clamp_mode);

  // Constants, de-duplicated.
  Id constant_u32(uint32_t value);
  Id constant_i32(int32_t value);
  Id constant_f32(float value);
  Id constant_f16_bits(uint16_t bits);
  Id constant_bool(bool value);
  Id constant(Id type, const std::vector<uint32_t>& literal_words);
  Id constant_composite(Id type, const std::vector<Id>& parts);
  // An OpSpecConstant of a 32-bit scalar type with its SpecId decoration, never de-duplicated:
  // each is a value the pipeline supplies (VkSpecializationInfo), `default_word` until then.
  Id spec_constant(Id type, uint32_t spec_id, uint32_t default_word = 0);

  // A module-scope OpVariable (StorageBuffer, PushConstant, Workgroup, Input, ...).
  Id global_variable(Id pointer_type, spv::StorageClass storage);

  // Function definitions: begin_function, parameters, blocks with instructions, end_function.
  Id begin_function(Id return_type, Id function_type,
                    spv::FunctionControlMask control = spv::FunctionControlMask::MaskNone);
  Id function_parameter(Id type);
  // Starts a block; `label` is a reserved id or 0 for a fresh one. Returns the label.
  Id begin_block(Id label = 0);
  // A Function-storage variable; placed at the start of the function's first block as required.
  Id local_variable(Id pointer_type);
  // Any instruction of the table inside the current block. For a row with a result, returns the
  // new result id (`result_type` is ignored for rows without one); otherwise 0.
  Id emit(spv::Op op, Id result_type, const std::vector<uint32_t>& operands);
  void emit_void(spv::Op op, const std::vector<uint32_t>& operands) { emit(op, 0, operands); }
  void end_function();

  // Shorthands for the instructions every compute shader uses.
  Id load(Id type, Id pointer) { return emit(spv::Op::OpLoad, type, {pointer}); }
  void store(Id pointer, Id value) { emit_void(spv::Op::OpStore, {pointer, value}); }
  Id access_chain(Id pointer_type, Id base, const std::vector<Id>& indices);
  Id ext_inst(Id type, Id set, uint32_t instruction, const std::vector<Id>& arguments);
  void selection_merge(Id merge_block);
  void loop_merge(Id merge_block, Id continue_block);
  void branch(Id target) { emit_void(spv::Op::OpBranch, {target}); }
  void branch_conditional(Id condition, Id true_block, Id false_block) {
    emit_void(spv::Op::OpBranchConditional, {condition, true_block, false_block});
  }
  void return_void() { emit_void(spv::Op::OpReturn, {}); }
  // OpControlBarrier with constant scope and semantics operands.
  void control_barrier(spv::Scope execution, spv::Scope memory, spv::MemorySemanticsMask semantics);

  // The first misuse, or OK.
  const absl::Status& status() const { return status_; }
  // The module's words, or the first misuse / the first id used without a definition.
  absl::StatusOr<std::vector<uint32_t>> finish() const;

 private:
  struct Instruction {
    spv::Op op;
    std::vector<uint32_t> words;  // after the opcode word: result type, result, operands
  };
  struct Block {
    Id label = 0;
    std::vector<Instruction> instructions;
    bool terminated = false;
  };
  struct Function {
    Instruction definition;
    std::vector<Instruction> parameters;
    std::vector<Instruction> variables;
    std::vector<Block> blocks;
    bool ended = false;
  };

  void fail(std::string message);
  // Builds an instruction from its row (nullopt after recording an error) and records its
  // result as defined.
  std::optional<Instruction> make(spv::Op op, Id result_type, Id result,
                                  std::vector<uint32_t> operands);
  // A type or constant: returns the existing id for the same key or appends a new one.
  Id intern(spv::Op op, Id result_type, std::vector<uint32_t> operands, uint32_t extra_key = 0);
  Block* open_block(std::string_view what);
  Function* open_function(std::string_view what);
  std::string describe(Id id) const;

  uint32_t version_;
  Id next_id_ = 1;
  absl::Status status_;
  // Asked of every instruction made and checked, never walked in order: hashed.
  absl::flat_hash_set<Id> defined_;
  std::set<uint32_t> capabilities_;
  std::vector<std::string> extensions_;
  std::map<std::string, Id, std::less<>> ext_imports_;
  std::optional<Instruction> memory_model_;
  std::vector<Instruction> entry_points_;
  std::vector<Instruction> execution_modes_;
  std::vector<Instruction> debug_names_;
  std::vector<Instruction> annotations_;
  absl::flat_hash_set<std::vector<uint32_t>> annotation_keys_;
  std::vector<Instruction> types_constants_globals_;
  absl::flat_hash_map<std::vector<uint32_t>, Id> interned_;
  std::vector<Function> functions_;
};

}  // namespace tilert::spirv
