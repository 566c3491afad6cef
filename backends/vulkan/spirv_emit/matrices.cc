// Matrix statements as SPV_KHR_cooperative_matrix: every matrix variable is a Function-storage
// variable of an OpTypeCooperativeMatrixKHR. Subgroup-scope matrices are 16x16, the one shape
// SpirvOptions::cooperative_matrix promises; workgroup-scope ones have Scope Workgroup and any
// rows x cols (SPV_NV_cooperative_matrix2; the driver stages them through shared memory it
// reserves). Loads and stores go through a pointer to the matrix's first element with the IR's
// stride, which counts elements of the array's stored type: the extension counts in units of the
// pointee type, which may differ from the component type (bf16 matrices read global arrays of
// 16-bit words), so only arrays whose stored element has the component's size are accepted. An
// f32 accumulator stored into a global f16 / bf16 array is converted first (OpFConvert to an
// accumulator of that component type, same scope and shape). matrix_tensor_load / _store
// address a window of a 2-D global tensor through an SPV_NV_tensor_addressing layout whose
// clamp mode is Constant: reads outside the tensor give 0 and writes there are dropped.
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan::spirv_emit {
namespace {

namespace coop = spirv::cooperative_matrix;
namespace tensor = spirv::tensor_addressing;
using simt::MatrixScope;
using simt::MatrixUse;
using simt::StmtKind;
using spv::Op;

// The only subgroup shape VK_KHR_cooperative_matrix devices are asked for (SpirvOptions says which).
constexpr int32_t kMatrixSize = 16;

uint32_t use_operand(MatrixUse use) {
  switch (use) {
    case MatrixUse::kA: return coop::kUseMatrixA;
    case MatrixUse::kB: return coop::kUseMatrixB;
    case MatrixUse::kAccumulator: return coop::kUseAccumulator;
  }
  return coop::kUseAccumulator;
}

const char* use_label(MatrixUse use) {
  switch (use) {
    case MatrixUse::kA: return "A";
    case MatrixUse::kB: return "B";
    case MatrixUse::kAccumulator: return "accumulator";
  }
  return "?";
}

const char* statement_name(StmtKind kind) {
  switch (kind) {
    case StmtKind::kMatrixFill: return "matrix_fill";
    case StmtKind::kMatrixLoad: return "matrix_load";
    case StmtKind::kMatrixStore: return "matrix_store";
    case StmtKind::kMatrixTensorLoad: return "matrix_tensor_load";
    case StmtKind::kMatrixTensorStore: return "matrix_tensor_store";
    case StmtKind::kMatrixMulAdd: return "matrix_mul_add";
    default: return "statement";
  }
}

bool is_tensor_statement(StmtKind kind) {
  return kind == StmtKind::kMatrixTensorLoad || kind == StmtKind::kMatrixTensorStore;
}

spv::Scope scope_of(const simt::MatrixVariable& m) {
  return m.scope == MatrixScope::kWorkgroup ? spv::Scope::Workgroup : spv::Scope::Subgroup;
}

// The Memory Operands mask of memory_operands() (none of its bits takes further operands), for
// the tensor instructions, which always carry one.
uint32_t memory_mask(const std::vector<uint32_t>& operands) { return operands.empty() ? 0 : operands[0]; }

// Whether `m`'s use, element type, scope and shape form one of the supported kinds: A and B of
// f16 (of bf16 where the device has bf16 matrices), accumulators of f32; 16x16 at subgroup scope,
// any shape at workgroup scope where the options allow it; otherwise an error saying why.
absl::Status check_matrix(const simt::MatrixVariable& m, const SpirvOptions& o) {
  bool operand = m.use == MatrixUse::kA || m.use == MatrixUse::kB;
  if (operand && m.type == DType::kBF16 && !o.bfloat16_cooperative_matrix) {
    return absl::UnimplementedError(absl::StrCat(
        "matrix ", m.name, ": bf16 cooperative matrices need a bf16 shape and VK_KHR_shader_bfloat16 "
        "(SpirvOptions::bfloat16_cooperative_matrix)"));
  }
  if ((operand && m.type != DType::kF16 && m.type != DType::kBF16) || (!operand && m.type != DType::kF32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matrix ", m.name, ": ", use_label(m.use), " matrix of ", av(dtype_name(m.type)),
        " (A and B matrices are f16 or bf16, accumulators f32)"));
  }
  if (m.scope == MatrixScope::kSubgroup) {
    if (m.rows == kMatrixSize && m.cols == kMatrixSize) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat("matrix ", m.name, " is ", m.rows, "x", m.cols,
                                                 ": only 16x16 subgroup-scope cooperative matrices are emitted"));
  }
  if (!o.workgroup_matrices) {
    return absl::UnimplementedError(absl::StrCat(
        "matrix ", m.name, " has workgroup scope, which needs VK_NV_cooperative_matrix2's workgroupScope "
        "and flexibleDimensions (SpirvOptions::workgroup_matrices)"));
  }
  if (o.spirv_version < spirv::kSpirvVersion1_6) {
    return absl::UnimplementedError(absl::StrCat(
        "matrix ", m.name, " has workgroup scope, which needs SPIR-V 1.6 (SPV_NV_cooperative_matrix2 "
        "requires it); the options ask for SPIR-V ", (o.spirv_version >> 16) & 0xff, ".",
        (o.spirv_version >> 8) & 0xff));
  }
  if (m.rows <= 0 || m.cols <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("matrix ", m.name, " is ", m.rows, "x", m.cols));
  }
  return absl::OkStatus();
}

}  // namespace

Id Emitter::matrix_component(DType t) {
  switch (t) {
    case DType::kF16:
      b_.add_capability(spv::Capability::Float16);
      return b_.type_float(16);
    case DType::kBF16:
      b_.add_extension(spirv::bfloat16::kExtension);
      b_.add_capability(spirv::bfloat16::kCapabilityType);
      b_.add_capability(spirv::bfloat16::kCapabilityCooperativeMatrix);
      return b_.type_bfloat16();
    default:
      return f32_type();
  }
}

void Emitter::declare_matrices() {
  if (failed() || f_.matrices.empty()) return;
  b_.add_capability(coop::kCapability);
  b_.add_extension(coop::kExtension);
  matrix_types_.resize(f_.matrices.size());
  matrix_variables_.resize(f_.matrices.size());
  for (size_t i = 0; i < f_.matrices.size(); ++i) {
    const simt::MatrixVariable& m = f_.matrices[i];
    if (absl::Status ok = check_matrix(m, o_); !ok.ok()) {
      fail(ok);
      return;
    }
    // SPV_NV_cooperative_matrix2 defines no capability for Workgroup scope or for shapes the
    // device does not list: Vulkan's workgroupScope and flexibleDimensions features allow them.
    // The extension is declared for its rules (the entry point's LocalSize comes first).
    if (m.scope == MatrixScope::kWorkgroup) b_.add_extension(spirv::tensor_addressing::kMatrixExtension);
    matrix_types_[i] = b_.type_cooperative_matrix(matrix_component(m.type), scope_of(m),
                                                  static_cast<uint32_t>(m.rows),
                                                  static_cast<uint32_t>(m.cols), use_operand(m.use));
    matrix_variables_[i] = b_.local_variable(b_.type_pointer(spv::StorageClass::Function, matrix_types_[i]));
    b_.set_name(matrix_variables_[i], m.name);
  }
}

Id Emitter::matrix_variable(uint32_t id, MatrixUse use, const char* statement) {
  if (id >= f_.matrices.size()) {
    return fail(absl::InvalidArgumentError(absl::StrCat(statement, ": no matrix with index ", id)));
  }
  const simt::MatrixVariable& m = f_.matrices[id];
  if (m.use != use) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        statement, ": matrix ", m.name, " has use ", use_label(m.use), ", expected ", use_label(use))));
  }
  return matrix_variables_[id];
}

const ArrayInfo* Emitter::matrix_array(const simt::Stmt& s, const simt::MatrixVariable& m, const char* name) {
  const ArrayInfo* a = array(s.space, s.array);
  if (a == nullptr) return nullptr;
  const std::string what = absl::StrCat(name, " of matrix ", m.name, " (", av(dtype_name(m.type)), ") through ",
                                        av(simt::space_name(a->space)), " array ", a->name, " of ",
                                        av(dtype_name(a->type)));
  if (is_tensor_statement(s.kind) && a->space != simt::Space::kGlobal) {
    fail(absl::InvalidArgumentError(absl::StrCat(what, ": tensor-addressed matrix statements address global arrays")));
    return nullptr;
  }
  if (a->space == simt::Space::kGlobal && a->layout == ElementLayout::kPacked) {
    fail(absl::UnimplementedError(absl::StrCat(
        what, ": its elements are packed into 32-bit words, as the device lacks 16-bit storage-buffer "
        "access (SpirvOptions::storage_16bit), and matrices read and write whole elements")));
    return nullptr;
  }
  // Same-sized elements: the type itself, bf16 as 16-bit words, f32 as u32 words (kept so for
  // atomics), or 16-bit pairs in u32 4-vectors (chunk-staged tiles, loaded through the vectors).
  const bool same_bits = a->type == m.type &&
                         (a->layout == ElementLayout::kNative || a->layout == ElementLayout::kBf16Bits ||
                          (m.type == DType::kF32 && a->layout == ElementLayout::kF32Bits) ||
                          (a->layout == ElementLayout::kPacked && a->vector_width > 1));
  const bool stores = s.kind == StmtKind::kMatrixStore || s.kind == StmtKind::kMatrixTensorStore;
  const bool converted = stores && a->space == simt::Space::kGlobal && m.type == DType::kF32 &&
                         ((a->type == DType::kF16 && a->layout == ElementLayout::kNative) ||
                          (a->type == DType::kBF16 && a->layout == ElementLayout::kBf16Bits));
  if (a->space == simt::Space::kPrivate || !(same_bits || converted)) {
    fail(absl::InvalidArgumentError(absl::StrCat(
        what,
        a->type == m.type && a->layout == ElementLayout::kWidened
            ? " widened to 32 bits (16-bit shared arrays need float16_arithmetic)"
            : "",
        ": matrices are loaded and stored only through shared or global arrays whose stored "
        "elements are the matrix's element type (accumulators also into global f16 and bf16 arrays)")));
    return nullptr;
  }
  if (converted && m.scope == MatrixScope::kSubgroup) {
    fail(absl::UnimplementedError(absl::StrCat(
        what, ": converting needs a 16x16 ", av(dtype_name(a->type)), " accumulator shape, which "
        "SpirvOptions does not promise at subgroup scope (workgroup-scope accumulators are converted)")));
    return nullptr;
  }
  if (converted && a->type == DType::kBF16 && !o_.bfloat16_cooperative_matrix) {
    fail(absl::UnimplementedError(absl::StrCat(
        what, ": converting to bf16 needs bf16 cooperative matrices (VK_KHR_shader_bfloat16, "
        "SpirvOptions::bfloat16_cooperative_matrix)")));
    return nullptr;
  }
  return a;
}

// Arrays of vectors (chunk_store targets) are loaded through their 16-byte vectors, the stride
// counted in vectors: the lowering's chunk-staged tiles have rows padded to whole 16 bytes
// (padded_row_pitch) and matrices start at multiples of 8 columns, so offsets and strides are
// whole vectors.
std::pair<Id, Id> Emitter::matrix_address(const simt::Stmt& s, const ArrayInfo& a) {
  Id offset = cast(expr(s.operands[0]), s.operands[0].type, DType::kI32);
  Id stride = cast(expr(s.operands[1]), s.operands[1].type, DType::kI32);
  if (failed()) return {0, 0};
  if (a.vector_width == 1) return {pointer_to(a, offset, a.element_type), stride};
  return {vector_pointer_to(a, offset),
          b_.emit(Op::OpSDiv, i32_type(), {stride, i32(static_cast<int32_t>(a.elements_per_vector()))})};
}

Id Emitter::matrix_value_for(uint32_t id, const ArrayInfo& a) {
  const simt::MatrixVariable& m = f_.matrices[id];
  Id value = b_.load(matrix_types_[id], matrix_variables_[id]);
  if (a.type == m.type) return value;
  Id stored = b_.type_cooperative_matrix(matrix_component(a.type), scope_of(m), static_cast<uint32_t>(m.rows),
                                         static_cast<uint32_t>(m.cols), coop::kUseAccumulator);
  return b_.emit(Op::OpFConvert, stored, {value});
}

// The layout of matrix_tensor_load / _store [row0, col0, rows, cols, stride]: a rows x cols
// tensor whose rows lie `stride` elements apart, sliced to the matrix's window at (row0, col0).
// OpTensorLayoutSetDimensionNV also resets the strides to (cols, 1), so the IR's stride is set
// after it. The operands go in as u32, as glslang passes them and NVIDIA's driver has run them
// (tests/bench/workgroup_matrix_probe.cc).
Id Emitter::tensor_layout(const simt::Stmt& s, const simt::MatrixVariable& m) {
  b_.add_extension(tensor::kExtension);
  b_.add_capability(tensor::kCapabilityTensorAddressing);
  b_.add_capability(tensor::kCapabilityMatrixTensorAddressing);
  std::array<Id, 5> v{};  // row0, col0, rows, cols, stride
  for (size_t i = 0; i < v.size(); ++i) v[i] = cast(expr(s.operands[i]), s.operands[i].type, DType::kI32);
  if (failed()) return 0;
  for (Id& x : v) x = b_.emit(Op::OpBitcast, u32_type(), {x});
  const Id type = b_.type_tensor_layout(2, tensor::kClampConstant);
  Id layout = b_.emit(tensor::kOpCreateTensorLayout, type, {});
  layout = b_.emit(tensor::kOpTensorLayoutSetDimension, type, {layout, v[2], v[3]});
  layout = b_.emit(tensor::kOpTensorLayoutSetStride, type, {layout, v[4], u32(1)});
  return b_.emit(tensor::kOpTensorLayoutSlice, type,
                 {layout, v[0], u32(static_cast<uint32_t>(m.rows)), v[1], u32(static_cast<uint32_t>(m.cols))});
}

void Emitter::matrix_load(const simt::Stmt& s, const char* name) {
  const simt::MatrixVariable& m = f_.matrices[s.id];
  if (m.use == MatrixUse::kAccumulator) {
    fail(absl::InvalidArgumentError(absl::StrCat(name, ": matrix ", m.name, " has use accumulator, expected A or B")));
    return;
  }
  const ArrayInfo* a = matrix_array(s, m, name);
  if (a == nullptr) return;
  const Id type = matrix_types_[s.id];
  if (s.kind == StmtKind::kMatrixTensorLoad) {
    // The Object operand fills what a tensor view clips; there is no view, so it is never read.
    Id layout = tensor_layout(s, m);
    if (failed()) return;
    Id zero = b_.emit(Op::OpCompositeConstruct, type, {b_.constant(matrix_component(m.type), {0})});
    Id first = pointer_to(*a, i32(0), a->element_type);
    b_.store(matrix_variables_[s.id], b_.emit(tensor::kOpLoadTensor, type,
                                              {first, zero, layout, memory_mask(memory_operands(*a)),
                                               tensor::kOperandsNone}));
    return;
  }
  auto [pointer, stride] = matrix_address(s, *a);
  if (failed()) return;
  std::vector<uint32_t> operands = {pointer, u32(s.a ? coop::kLayoutColumnMajor : coop::kLayoutRowMajor), stride};
  for (uint32_t w : memory_operands(*a)) operands.push_back(w);
  b_.store(matrix_variables_[s.id], b_.emit(coop::kOpLoad, type, operands));
}

void Emitter::matrix_store(const simt::Stmt& s, const char* name) {
  // 0 without an error: a builder failure, reported when the module is finished.
  if (matrix_variable(s.id, MatrixUse::kAccumulator, name) == 0) return;
  const simt::MatrixVariable& m = f_.matrices[s.id];
  const ArrayInfo* a = matrix_array(s, m, name);
  if (a == nullptr) return;
  if (s.kind == StmtKind::kMatrixTensorStore) {
    Id layout = tensor_layout(s, m);
    if (failed()) return;
    b_.emit_void(tensor::kOpStoreTensor, {pointer_to(*a, i32(0), a->element_type), matrix_value_for(s.id, *a),
                                          layout, memory_mask(memory_operands(*a)), tensor::kOperandsNone});
    return;
  }
  auto [pointer, stride] = matrix_address(s, *a);
  if (failed()) return;
  std::vector<uint32_t> operands = {pointer, matrix_value_for(s.id, *a), u32(coop::kLayoutRowMajor), stride};
  for (uint32_t w : memory_operands(*a)) operands.push_back(w);
  b_.emit_void(coop::kOpStore, operands);
}

void Emitter::matrix_statement(const simt::Stmt& s) {
  const char* name = statement_name(s.kind);
  if (!o_.cooperative_matrix) {
    fail(absl::UnimplementedError(absl::StrCat(
        name, ": matrix statements need VK_KHR_cooperative_matrix (SpirvOptions::cooperative_matrix)")));
    return;
  }
  const bool tensor = is_tensor_statement(s.kind);
  if (tensor && !o_.tensor_addressing) {
    fail(absl::UnimplementedError(absl::StrCat(
        name, ": tensor-addressed matrix loads and stores need VK_NV_cooperative_matrix2's "
        "cooperativeMatrixTensorAddressing (SpirvOptions::tensor_addressing)")));
    return;
  }
  size_t expected = s.kind == StmtKind::kMatrixFill ? 1 : s.kind == StmtKind::kMatrixMulAdd ? 0 : tensor ? 5 : 2;
  if (s.operands.size() != expected) {
    fail(absl::InvalidArgumentError(
        absl::StrCat(name, " has ", s.operands.size(), " operands, expected ", expected)));
    return;
  }
  if (s.id >= f_.matrices.size()) {
    fail(absl::InvalidArgumentError(absl::StrCat(name, ": no matrix with index ", s.id)));
    return;
  }
  const simt::MatrixVariable& m = f_.matrices[s.id];
  if (tensor && m.scope != MatrixScope::kWorkgroup) {
    fail(absl::InvalidArgumentError(absl::StrCat(
        name, ": matrix ", m.name, " has subgroup scope; tensor-addressed statements are for "
        "workgroup-scope matrices")));
    return;
  }
  const Id type = matrix_types_[s.id];

  switch (s.kind) {
    case StmtKind::kMatrixFill: {
      if (m.type == DType::kBF16) {  // no f32 -> bf16 conversion is emitted (BFloat16 arithmetic)
        fail(absl::UnimplementedError(absl::StrCat(name, " of bf16 matrix ", m.name)));
        return;
      }
      Id value = cast(expr(s.operands[0]), s.operands[0].type, m.type);
      if (failed()) return;
      if (m.type == DType::kF16) value = b_.emit(Op::OpFConvert, b_.type_float(16), {value});
      b_.store(matrix_variables_[s.id], b_.emit(Op::OpCompositeConstruct, type, {value}));
      return;
    }
    case StmtKind::kMatrixLoad:
    case StmtKind::kMatrixTensorLoad:
      matrix_load(s, name);
      return;
    case StmtKind::kMatrixStore:
    case StmtKind::kMatrixTensorStore:
      matrix_store(s, name);
      return;
    case StmtKind::kMatrixMulAdd: {
      Id c = matrix_variable(s.id, MatrixUse::kAccumulator, name);
      Id a = matrix_variable(s.a, MatrixUse::kA, name);
      Id b = matrix_variable(s.b, MatrixUse::kB, name);
      if (failed()) return;
      const simt::MatrixVariable &ma = f_.matrices[s.a], &mb = f_.matrices[s.b];
      if (ma.rows != m.rows || ma.cols != mb.rows || mb.cols != m.cols) {
        fail(absl::InvalidArgumentError(absl::StrCat(
            name, ": ", m.name, " (", m.rows, "x", m.cols, ") += ", ma.name, " (", ma.rows, "x",
            ma.cols, ") * ", mb.name, " (", mb.rows, "x", mb.cols, ") has mismatched shapes")));
        return;
      }
      if (ma.type != mb.type) {  // every shape the devices list has A and B of one type
        fail(absl::InvalidArgumentError(absl::StrCat(name, ": ", ma.name, " of ", av(dtype_name(ma.type)), " times ",
                                                     mb.name, " of ", av(dtype_name(mb.type)))));
        return;
      }
      if (ma.scope != m.scope || mb.scope != m.scope) {  // the extension asks one scope of all three
        fail(absl::InvalidArgumentError(absl::StrCat(name, ": ", m.name, ", ", ma.name, " and ", mb.name,
                                                     " are not all of one scope")));
        return;
      }
      Id product = b_.emit(coop::kOpMulAdd, type,
                           {b_.load(matrix_types_[s.a], a), b_.load(matrix_types_[s.b], b),
                            b_.load(type, c)});
      b_.store(c, product);
      return;
    }
    default:
      fail(absl::InvalidArgumentError(absl::StrCat("not a matrix statement: ", static_cast<int>(s.kind))));
      return;
  }
}

}  // namespace tilert::vulkan::spirv_emit
