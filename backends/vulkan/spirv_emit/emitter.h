// The SPIR-V emitter's state, shared by its files: declarations.cc (types, interface variables,
// arrays, the entry point), expressions.cc (values and casts), math.cc (GLSL.std.450 calls,
// erf, 16-bit float rounding), memory.cc (array element loads, stores and atomics),
// statements.cc (structured control flow and barriers) and matrices.cc (cooperative matrices,
// their tensor-addressed loads and stores included).
//
// Values of 16-bit and 8-bit types live in 32-bit "representation" types while the shader
// computes (f16 and bf16 in f32, rounded to their precision; i8 in i32, u8 in u32, wrapped);
// only array elements are narrow, so every narrow conversion happens at a load or store.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "backends/vulkan/spirv/module_builder.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "lowering/simt.h"

namespace tilert::vulkan::spirv_emit {

using spirv::Id;

// How an array's elements are stored.
enum class ElementLayout : uint8_t {
  kNative,   // the element type itself (f16 with 16-bit access, i32, ...)
  kWidened,  // a narrow type kept in its 32-bit representation (shared / private only)
  kBf16Bits, // bf16 as 16-bit unsigned integers (global, with 16-bit access)
  kPacked,   // narrow elements packed into u32 words: global arrays without 8/16-bit access, and
             // 16-bit shared tiles written in 16-byte chunks (see ArrayInfo::vector_width)
  kF32Bits,  // f32 as u32 words, so a compare-exchange loop can add to them atomically
};

struct ArrayInfo {
  std::string name;
  DType type = DType::kF32;      // element type in the IR
  simt::Space space = simt::Space::kGlobal;
  ElementLayout layout = ElementLayout::kNative;
  spv::StorageClass storage = spv::StorageClass::StorageBuffer;
  Id variable = 0;
  Id element_type = 0;           // the stored element's SPIR-V type
  bool in_block = false;         // a storage buffer: the array is member 0 of a struct
  int64_t count = 0;             // elements; 0 for global arrays (runtime-sized)
  // Shared arrays written by chunk_store are arrays of 16-byte 4-vectors, so a chunk is stored
  // whole: of the element type for 32-bit elements, of u32 words each packing two elements for
  // 16-bit ones (kPacked; a vector holds 8 elements; cooperative matrices load from the vectors).
  // 16-bit tiles whose size is no multiple of 8 stay 4-vectors of the element type (8 bytes).
  uint32_t vector_width = 1;
  Id vector_type = 0;
  uint32_t elements_per_vector() const {
    return layout == ElementLayout::kPacked ? vector_width * (4 / static_cast<uint32_t>(dtype_size(type)))
                                            : vector_width;
  }
  // Global arrays read by chunk_load: a second view of the same binding as 16-byte vectors.
  Id chunk_view = 0;
};

class Emitter {
 public:
  Emitter(const simt::Function& f, const SpirvOptions& o);
  absl::StatusOr<std::vector<uint32_t>> run();

  // --- declarations.cc
  Id repr_type(DType t);             // the SPIR-V type a value of `t` is computed in
  void check_shared_size();          // fails if the stored shared arrays exceed the device's
  Id u32_type() { return b_.type_int(32, false); }
  Id i32_type() { return b_.type_int(32, true); }
  Id f32_type() { return b_.type_float(32); }
  Id bool_type() { return b_.type_bool(); }
  Id u32(uint32_t v) { return b_.constant_u32(v); }
  Id i32(int32_t v) { return b_.constant_i32(v); }
  Id f32(float v) { return b_.constant_f32(v); }
  Id constant_int(DType t, int64_t v);
  Id constant_float(DType t, double v);
  void need_int64();
  void need_float64();
  // Records the first error (later ones are dropped); returns 0 so callers can `return fail(...)`.
  Id fail(absl::Status status);
  bool failed() const { return !status_.ok(); }
  const std::string& name() const { return f_.name; }

  // --- expressions.cc
  Id expr(const simt::Expr& e);
  // Converts `value` (in repr_type(from)) to repr_type(to), rounding to narrow types.
  Id cast(Id value, DType from, DType to);

  // --- math.cc
  Id call(const simt::Expr& e);
  Id glsl(Id type, uint32_t instruction, const std::vector<Id>& args);
  Id round_to_f16(Id f32_value);
  Id f32_to_bf16_bits(Id f32_value);  // u32 holding the 16 bits, nearest even, NaN kept
  Id bf16_bits_to_f32(Id u32_bits);
  Id f16_bits_to_f32(Id u32_bits);
  Id f32_to_f16_bits(Id f32_value);
  Id erf_f32(Id x);

  // --- memory.cc
  const ArrayInfo* array(simt::Space space, uint32_t id);
  Id load_element(const ArrayInfo& a, Id index);
  void store_element(const ArrayInfo& a, Id index, Id value);
  void atomic_add(const ArrayInfo& a, Id index, Id value);
  Id pointer_to(const ArrayInfo& a, Id index, Id element_type);
  // A pointer to the vector holding element `index` (a multiple of the width) of a vector array.
  Id vector_pointer_to(const ArrayInfo& a, Id index);
  void chunk_load(const simt::Stmt& s);
  void chunk_store(const simt::Stmt& s);
  // Memory operands of a load or store of `a`'s elements: none, or NonPrivatePointer under the
  // Vulkan memory model for the shared and global memory other invocations also access.
  std::vector<uint32_t> memory_operands(const ArrayInfo& a) const;

  // --- matrices.cc
  void declare_matrices();
  void matrix_statement(const simt::Stmt& s);
  // Whether the module uses the Vulkan memory model (a function with matrices).
  bool vulkan_memory_model() const { return vulkan_memory_model_; }

  // --- statements.cc
  void body(const simt::Body& body);
  Id variable(uint32_t id);  // a private scalar's OpVariable

  spirv::ModuleBuilder& builder() { return b_; }

 private:
  void declare_interface();
  void declare_arrays();
  Id builtin_variable(spv::BuiltIn builtin, Id type);
  Id builtin(simt::Builtin b);
  Id scalar_param(uint32_t id);
  bool needs_f32_bits(simt::Space space, uint32_t id) const;
  // Whether a statement of `kind` names array `id` of `space` (s.id, or s.array for chunk_load
  // and the matrix loads and stores).
  bool used_by(simt::StmtKind kind, simt::Space space, uint32_t id) const;
  void statement(const simt::Stmt& s);
  void if_statement(const simt::Stmt& s);
  void for_statement(const simt::Stmt& s);
  void while_statement(const simt::Stmt& s);
  void barrier(const simt::Stmt& s);
  Id load_memory(const ArrayInfo& a, Id type, Id pointer);
  void store_memory(const ArrayInfo& a, Id pointer, Id value);
  uint32_t atomic_scope(const ArrayInfo& a) const;
  Id matrix_variable(uint32_t id, simt::MatrixUse use, const char* statement);
  // The OpTypeFloat / bf16 type of a matrix component, declaring what it needs.
  Id matrix_component(DType t);
  // The array matrix statement `s` reads or writes, if its stored elements can hold the
  // elements of matrix `m` (else an error and nullptr).
  const ArrayInfo* matrix_array(const simt::Stmt& s, const simt::MatrixVariable& m, const char* statement);
  void matrix_load(const simt::Stmt& s, const char* statement);
  void matrix_store(const simt::Stmt& s, const char* statement);
  // The pointer to the first element and the stride of a matrix_load / matrix_store of `a`.
  std::pair<Id, Id> matrix_address(const simt::Stmt& s, const ArrayInfo& a);
  // Accumulator `id` as the elements of array `a` are stored: itself, or converted to f16 / bf16.
  Id matrix_value_for(uint32_t id, const ArrayInfo& a);
  // The tensor layout of a matrix_tensor_load / _store window onto matrix `m`.
  Id tensor_layout(const simt::Stmt& s, const simt::MatrixVariable& m);

  const simt::Function& f_;
  SpirvOptions o_;
  spirv::ModuleBuilder b_;
  absl::Status status_;
  Id glsl_ = 0;
  Id main_ = 0;
  std::vector<Id> interface_;
  std::vector<ArrayInfo> globals_;   // per parameter (arrays only are filled in)
  std::vector<ArrayInfo> shared_;
  std::vector<ArrayInfo> private_arrays_;  // per variable (arrays only)
  std::vector<Id> variables_;              // per variable: its OpVariable
  std::vector<Id> matrix_types_;           // per matrix: its OpTypeCooperativeMatrixKHR
  std::vector<Id> matrix_variables_;       // per matrix: its OpVariable
  bool vulkan_memory_model_ = false;
  Id push_block_ = 0;
  PushConstantLayout push_layout_;
  std::vector<Id> spec_constants_;  // per parameter: its OpSpecConstant, or 0
  std::vector<std::pair<spv::BuiltIn, Id>> builtins_;
  bool block_terminated_ = false;    // the current block ended with a return
};

}  // namespace tilert::vulkan::spirv_emit
