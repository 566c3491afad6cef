// Matrix statements as SPV_KHR_cooperative_matrix: every matrix variable is a Function-storage
// variable of an OpTypeCooperativeMatrixKHR with Subgroup scope; loads and stores go through a
// pointer to the matrix's first element in row-major layout with the IR's stride, which counts
// elements of the array's stored type (the extension counts in units of the pointee type, and
// only arrays whose stored element is the matrix's component type are accepted).
#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan::spirv_emit {
namespace {

namespace coop = spirv::cooperative_matrix;
using simt::MatrixUse;
using simt::StmtKind;
using spv::Op;

// The only shape VK_KHR_cooperative_matrix devices are asked for (SpirvOptions says which).
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
    case StmtKind::kMatrixMulAdd: return "matrix_mul_add";
    default: return "statement";
  }
}

// Whether `m`'s use and element type form one of the supported kinds: A and B of f16 (of bf16
// where the device has bf16 matrices), accumulators of f32, 16x16; otherwise an error saying why.
absl::Status check_matrix(const simt::MatrixVariable& m, bool bfloat16) {
  bool operand = m.use == MatrixUse::kA || m.use == MatrixUse::kB;
  if (operand && m.type == DType::kBF16 && !bfloat16) {
    return absl::UnimplementedError(absl::StrCat(
        "matrix ", m.name, ": bf16 cooperative matrices need a bf16 shape and VK_KHR_shader_bfloat16 "
        "(SpirvOptions::bfloat16_cooperative_matrix)"));
  }
  if ((operand && m.type != DType::kF16 && m.type != DType::kBF16) || (!operand && m.type != DType::kF32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matrix ", m.name, ": ", use_label(m.use), " matrix of ", av(dtype_name(m.type)),
        " (A and B matrices are f16 or bf16, accumulators f32)"));
  }
  if (m.rows != kMatrixSize || m.cols != kMatrixSize) {
    return absl::UnimplementedError(absl::StrCat("matrix ", m.name, " is ", m.rows, "x", m.cols,
                                                 ": only 16x16 cooperative matrices are emitted"));
  }
  return absl::OkStatus();
}

}  // namespace

void Emitter::declare_matrices() {
  if (failed() || f_.matrices.empty()) return;
  b_.add_capability(coop::kCapability);
  b_.add_extension(coop::kExtension);
  matrix_types_.resize(f_.matrices.size());
  matrix_variables_.resize(f_.matrices.size());
  for (size_t i = 0; i < f_.matrices.size(); ++i) {
    const simt::MatrixVariable& m = f_.matrices[i];
    if (absl::Status ok = check_matrix(m, o_.bfloat16_cooperative_matrix); !ok.ok()) {
      fail(ok);
      return;
    }
    Id component = f32_type();
    if (m.type == DType::kF16) {
      b_.add_capability(spv::Capability::Float16);
      component = b_.type_float(16);
    } else if (m.type == DType::kBF16) {
      b_.add_extension(spirv::bfloat16::kExtension);
      b_.add_capability(spirv::bfloat16::kCapabilityType);
      b_.add_capability(spirv::bfloat16::kCapabilityCooperativeMatrix);
      component = b_.type_bfloat16();
    }
    matrix_types_[i] = b_.type_cooperative_matrix(component, spv::Scope::Subgroup,
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

void Emitter::matrix_statement(const simt::Stmt& s) {
  const char* name = statement_name(s.kind);
  if (!o_.cooperative_matrix) {
    fail(absl::UnimplementedError(absl::StrCat(
        name, ": matrix statements need VK_KHR_cooperative_matrix (SpirvOptions::cooperative_matrix)")));
    return;
  }
  size_t expected = s.kind == StmtKind::kMatrixFill ? 1 : s.kind == StmtKind::kMatrixMulAdd ? 0 : 2;
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
  const Id type = matrix_types_[s.id];

  // The array a load or store goes through, with a pointer to element `offset`. Its stored
  // element must have the matrix's component type (f32 accumulators may also go to arrays kept
  // as u32 words for atomics: same size, so the stride counts the same).
  auto array_pointer = [&](const ArrayInfo** out) -> Id {
    const ArrayInfo* a = array(s.space, s.array);
    if (a == nullptr) return 0;
    bool same_bits = a->type == m.type &&
                     (a->layout == ElementLayout::kNative ||
                      (m.type == DType::kF32 && a->layout == ElementLayout::kF32Bits) ||
                      (a->layout == ElementLayout::kPacked && a->vector_width > 1));
    if (a->space == simt::Space::kPrivate || !same_bits) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          name, " of matrix ", m.name, " (", av(dtype_name(m.type)), ") through ",
          av(simt::space_name(a->space)), " array ", a->name, " of ", av(dtype_name(a->type)),
          a->type == m.type && a->layout == ElementLayout::kWidened
              ? " widened to 32 bits (16-bit shared arrays need float16_arithmetic)"
              : "",
          ": matrices are loaded and stored only through shared or global arrays whose stored "
          "elements are the matrix's element type")));
    }
    *out = a;
    Id offset = cast(expr(s.operands[0]), s.operands[0].type, DType::kI32);
    // Arrays of vectors (chunk_store targets) are loaded through their 16-byte vectors, the
    // stride counted in vectors: the lowering's chunk-staged tiles have rows padded to whole 16
    // bytes (padded_row_pitch) and matrices start at multiples of 8 columns, so offsets and
    // strides are whole vectors.
    if (a->vector_width > 1) return vector_pointer_to(*a, offset);
    return pointer_to(*a, offset, a->element_type);
  };
  auto stride = [&](const ArrayInfo* a) {
    Id elements = cast(expr(s.operands[1]), s.operands[1].type, DType::kI32);
    if (a == nullptr || a->vector_width == 1) return elements;
    return b_.emit(Op::OpSDiv, i32_type(), {elements, i32(static_cast<int32_t>(a->elements_per_vector()))});
  };

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
    case StmtKind::kMatrixLoad: {
      if (m.use == MatrixUse::kAccumulator) {
        fail(absl::InvalidArgumentError(
            absl::StrCat(name, ": matrix ", m.name, " has use accumulator, expected A or B")));
        return;
      }
      const ArrayInfo* a = nullptr;
      Id pointer = array_pointer(&a);
      Id row_stride = stride(a);
      if (failed()) return;
      std::vector<uint32_t> operands = {pointer, u32(s.a ? coop::kLayoutColumnMajor : coop::kLayoutRowMajor),
                                         row_stride};
      for (uint32_t w : memory_operands(*a)) operands.push_back(w);
      b_.store(matrix_variables_[s.id], b_.emit(coop::kOpLoad, type, operands));
      return;
    }
    case StmtKind::kMatrixStore: {
      Id variable = matrix_variable(s.id, MatrixUse::kAccumulator, name);
      const ArrayInfo* a = nullptr;
      Id pointer = variable == 0 ? 0 : array_pointer(&a);
      Id row_stride = stride(a);
      if (failed() || a == nullptr) return;  // a builder failure (variable 0) is reported at the end
      std::vector<uint32_t> operands = {pointer, b_.load(type, variable),
                                        u32(coop::kLayoutRowMajor), row_stride};
      for (uint32_t w : memory_operands(*a)) operands.push_back(w);
      b_.emit_void(coop::kOpStore, operands);
      return;
    }
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
