// PTX for the SIMT matrix statements: 16x16 matrices held by the 32 lanes of a warp in the
// fragment layouts of mma.sync.aligned.m16n8k16, loaded from shared memory with ldmatrix and
// multiplied on the tensor cores (sm_80 and newer).
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type";
// g = lane >> 2, t = lane & 3, a .b32 register holds two 16-bit elements, the lower-numbered one
// in its low half):
//   A (16x16, f16 / bf16): a0..a7 in 4 registers; register j holds rows g + 8 * (j & 1), columns
//     2t + 8 * (j >> 1) and the next one. So register 0 covers the 8x8 block rows 0-7, cols 0-7;
//     1: rows 8-15, cols 0-7; 2: rows 0-7, cols 8-15; 3: rows 8-15, cols 8-15.
//   B (16x8 per instruction): b0..b3 in 2 registers; register j holds rows (k) 2t + 8j and the
//     next one, column (n) g. Our 16x16 B is two such fragments, n-block 0 (columns 0-7) in
//     registers 0, 1 and n-block 1 (columns 8-15) in registers 2, 3.
//   C (16x8 f32 per instruction): c0, c1 at row g, columns 2t, 2t + 1; c2, c3 at row g + 8, the
//     same columns. Our 16x16 accumulator is two: registers 0-3 columns 0-7, 4-7 columns 8-15.
//
// Why ldmatrix gives exactly these (PTX ISA, ldmatrix): .x4 loads four 8x8 matrices of 16-bit
// elements; lanes 8i..8i+7 supply the addresses of the eight rows of matrix i, and register i of
// lane L receives row L >> 2, elements 2 (L & 3) and 2 (L & 3) + 1 of matrix i. With .trans the
// matrix is read column-major: lane L receives rows 2 (L & 3) and 2 (L & 3) + 1 of column L >> 2.
//   Every lane gives the address of element (row L % 16, column 8 (L / 16)). Lanes 0-7 then name
//   rows 0-7 at column 0 (matrix 0 = block rows 0-7, cols 0-7), lanes 8-15 rows 8-15 at column 0,
//   lanes 16-23 rows 0-7 at column 8, lanes 24-31 rows 8-15 at column 8: for A, register i is
//   the block of A's register i above, element for element (row g, columns 2t, 2t + 1).
//   For B (K x N, row-major) the same addresses name matrix 0 = k 0-7 x n 0-7, 1 = k 8-15 x n 0-7,
//   2 = k 0-7 x n 8-15, 3 = k 8-15 x n 8-15; .trans gives lane L the elements (k 2t, n g) and
//   (k 2t + 1, n g) of each: registers 0, 1 are b0..b3 of n-block 0, registers 2, 3 of n-block 1.
//   A column-major operand is stored transposed (rows: A's k or B's n). Its lanes give the
//   address of (row (L & 7) + 8 (L >> 4), column 8 ((L >> 3) & 1)): lanes 8-15 name stored rows
//   0-7 at column 8, lanes 16-23 rows 8-15 at column 0. For B (stored n x k, no .trans) matrix 1
//   is then n 0-7 x k 8-15, register 1 of n-block 0; for A (stored k x m, .trans) matrix 1 is
//   m 8-15 x k 0-7, A's register 1. Registers come out in fragment order either way.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_function.h"
#include "ir/expr.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

using simt::MatrixUse;
using simt::MatrixVariable;
using simt::Stmt;

constexpr int kWarpSize = 32;
constexpr int kMatrixSize = 16;  // rows and columns of every matrix
constexpr const char* kMmaInstruction = "mma.sync.aligned.m16n8k16";

// 32-bit registers a matrix of `use` takes in each lane.
int matrix_registers(MatrixUse use) { return use == MatrixUse::kAccumulator ? 8 : 4; }


// "{%mat3_0, %mat3_1}" for registers [first, first + count) of matrix `id`.
std::string matrix_regs(uint32_t id, int first, int count) {
  std::string out = "{";
  for (int i = 0; i < count; ++i)
    absl::StrAppend(&out, i ? ", " : "", matrix_reg(id, first + i));
  out += '}';
  return out;
}

bool is_matrix_input_type(DType t) { return t == DType::kF16 || t == DType::kBF16; }

const char* ptx_type(DType t) { return t == DType::kBF16 ? "bf16" : "f16"; }


bool has_mma_m16n8k16(const lowering::TargetDescription& target, DType input) {
  for (const lowering::MatrixShape& shape : target.matrix_shapes)
    if (shape.instruction == kMmaInstruction && shape.m == 16 && shape.n == 8 && shape.k == 16 &&
        shape.input == input && shape.accumulator == DType::kF32)
      return true;
  return false;
}

// Whether integer `e` is provably even for every value of its unknowns: a constant (after
// unrolling), a product with an even factor, a sum or difference of even terms, a left shift.
// Wrap-around and integer casts keep the lowest bit, so the proof holds in 32-bit arithmetic.
bool known_even(const simt::Expr& e, const std::map<uint32_t, int64_t>& known) {
  if (!is_integer(e.type)) return false;
  if (std::optional<int64_t> v = fold_constant(e, known)) return *v % 2 == 0;
  if (e.kind == simt::ExprKind::kCast)
    return e.args.size() == 1 && is_integer(e.args[0].type) && known_even(e.args[0], known);
  if (e.kind != simt::ExprKind::kBinary || e.args.size() != 2) return false;
  switch (static_cast<BinaryOp>(e.op)) {
    case BinaryOp::kMul:
    case BinaryOp::kBitAnd: return known_even(e.args[0], known) || known_even(e.args[1], known);
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return known_even(e.args[0], known) && known_even(e.args[1], known);
    case BinaryOp::kShl: {
      std::optional<int64_t> shift = fold_constant(e.args[1], known);
      return shift && *shift >= 1 && *shift < 32;
    }
    default: return false;
  }
}

}  // namespace

std::string matrix_reg(uint32_t id, int i) {
  std::string name = numbered_name("%mat", id);
  name += '_';
  name += numbered_name("", static_cast<uint32_t>(i));
  return name;
}

int sm_version(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  return static_cast<int>(std::strtol(arch.c_str() + 3, nullptr, 10));
}

absl::Status FunctionEmitter::check_matrices() const {
  if (f_.matrices.empty()) return absl::OkStatus();
  if (f_.threads % kWarpSize != 0)
    return error(absl::StrCat("matrix statements need whole warps; threads ", f_.threads,
                              " is not a multiple of 32"));
  for (const MatrixVariable& m : f_.matrices) {
    if (m.scope != simt::MatrixScope::kSubgroup)  // SPIR-V's (VK_NV_cooperative_matrix2) only
      return unimplemented(absl::StrCat("matrix ", m.name, " has workgroup scope; PTX emits matrices "
                                        "held by one warp"));
    if (m.rows != kMatrixSize || m.cols != kMatrixSize)
      return unimplemented(absl::StrCat("matrix ", m.name, " is ", m.rows, "x", m.cols,
                                        "; only 16x16 matrices are lowered"));
    const bool input = m.use != MatrixUse::kAccumulator;
    if (input && !is_matrix_input_type(m.type))
      return unimplemented(absl::StrCat("matrix ", m.name, " (", av(simt::matrix_use_name(m.use)),
                                        ") of ", av(dtype_name(m.type)), "; A and B are f16 or bf16"));
    if (!input && m.type != DType::kF32)
      return unimplemented(absl::StrCat("accumulator ", m.name, " of ", av(dtype_name(m.type)),
                                        "; accumulators are f32"));
    // ldmatrix needs sm_75, mma.sync.m16n8k16 with f16 / bf16 inputs sm_80.
    if (input && (sm_version(target_.arch) < 80 || !has_mma_m16n8k16(target_, m.type)))
      return unimplemented(absl::StrCat("matrix ", m.name, " of ", av(dtype_name(m.type)),
                                        " needs mma.sync.m16n8k16 and ldmatrix (sm_80 or newer), "
                                        "which the target does not offer"));
  }
  return absl::OkStatus();
}

std::string FunctionEmitter::declare_matrices() const {
  std::string out;
  for (size_t id = 0; id < f_.matrices.size(); ++id) {
    const MatrixVariable& m = f_.matrices[id];
    absl::StrAppend(&out, "\t// matrix ", m.name, ": ", av(simt::matrix_use_name(m.use)), " ",
                    av(dtype_name(m.type)), "[16x16]\n\t.reg ",
                    m.use == MatrixUse::kAccumulator ? ".f32" : ".b32", " %mat", id, "_<",
                    matrix_registers(m.use), ">;\n");
  }
  return out;
}

absl::StatusOr<const MatrixVariable*> FunctionEmitter::matrix(uint32_t id,
                                                              std::string_view statement) const {
  if (id >= f_.matrices.size())
    return error(absl::StrCat(av(statement), ": no matrix #", id, " (the function has ",
                              f_.matrices.size(), ")"));
  return &f_.matrices[id];
}

// The shared array and the rows a load or store touches. Offsets and strides known here (constant
// after unrolling) are checked against the array's bounds and, for ldmatrix, against its 16-byte
// row alignment; run-time ones are the lowering's guarantee.
absl::Status FunctionEmitter::check_matrix_region(const Stmt& s, std::string_view statement,
                                                  DType element, bool rows_16_byte_aligned) const {
  if (s.space != simt::Space::kShared)
    return unimplemented(absl::StrCat(av(statement), " from ", av(simt::space_name(s.space)),
                                      " memory; only shared arrays are lowered"));
  if (s.array >= f_.shared.size()) return error(absl::StrCat(av(statement), ": no shared array #", s.array));
  const simt::SharedArray& array = f_.shared[s.array];
  if (array.type != element)
    return error(absl::StrCat(av(statement), ": shared array ", array.name, " holds ",
                              av(dtype_name(array.type)), ", the matrix ", av(dtype_name(element))));
  std::optional<int64_t> offset = fold_constant(s.operands[0], unrolled_);
  std::optional<int64_t> stride = fold_constant(s.operands[1], unrolled_);
  if (rows_16_byte_aligned) {
    const int64_t per_16_bytes = 16 / dtype_size(element);
    for (auto [name, value] : {std::pair{"offset", offset}, std::pair{"stride", stride}})
      if (value && *value % per_16_bytes != 0)
        return error(absl::StrCat(av(statement), ": ", name, " ", *value, " in ", array.name,
                                  " is not a multiple of ", per_16_bytes,
                                  " elements (ldmatrix reads 16-byte aligned rows)"));
  }
  if (offset && stride) {
    const int64_t last_row = (kMatrixSize - 1) * *stride;
    const int64_t first = *offset + std::min<int64_t>(0, last_row);
    const int64_t last = *offset + std::max<int64_t>(0, last_row) + kMatrixSize - 1;
    if (first < 0 || last >= array.count)
      return error(absl::StrCat(av(statement), ": elements ", first, "..", last, " are outside ",
                                array.name, "[", array.count, "]"));
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::matrix_fill(const Stmt& s) {
  ASSIGN_OR_RETURN(const MatrixVariable* m, matrix(s.id, "matrix_fill"));
  ASSIGN_OR_RETURN(PtxValue value, expr(s.operands[0]));
  ASSIGN_OR_RETURN(value, cast(value, m->type));
  if (m->use == MatrixUse::kAccumulator) {
    for (int i = 0; i < matrix_registers(m->use); ++i)
      line("mov.f32 ", matrix_reg(s.id, i), ", ", value.reg);
    return absl::OkStatus();
  }
  // A and B registers each hold two 16-bit elements.
  std::string pair = new_reg(RegClass::kB32);
  line("mov.b32 ", pair, ", {", value.reg, ", ", value.reg, "}");
  for (int i = 0; i < matrix_registers(m->use); ++i)
    line("mov.b32 ", matrix_reg(s.id, i), ", ", pair);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::matrix_load(const Stmt& s) {
  ASSIGN_OR_RETURN(const MatrixVariable* m, matrix(s.id, "matrix_load"));
  if (m->use == MatrixUse::kAccumulator)
    return error(absl::StrCat("matrix_load into accumulator ", m->name,
                              "; only A and B matrices are loaded"));
  RETURN_IF_ERROR(check_matrix_region(s, "matrix_load", m->type, true));
  // B is stored k x n row-major; its fragments want columns of k, hence .trans. A column-major
  // operand (s.a = 1) is the transpose of that: the stored rows are A's columns (k) or B's
  // columns (n), so A takes .trans and B does not. Its lanes name the stored matrix's blocks in
  // the operand's register order (see the file comment), so every register lands where the mma
  // reads it and no moves pair them up.
  const bool column_major = s.a != 0;
  const bool trans = (m->use == MatrixUse::kB) != column_major;
  const int64_t elem = dtype_size(m->type);
  // The lane's part of the address: base + (row * stride + column) * elem. With a constant
  // stride it is formed once in the prologue, and a load adds offset * elem to it: an offset's
  // constant parts then fold into ldmatrix's immediate and its run-time part (a pipeline stage)
  // is shared by every load from the array.
  auto lane_part = [&](const std::string& stride, const std::string& into) {
    std::string out;
    auto put = [&](auto&&... pieces) { absl::StrAppend(&out, "\t", pieces..., ";\n"); };
    const std::string lane = new_reg(RegClass::kB32), row = new_reg(RegClass::kB32),
                      column = new_reg(RegClass::kB32), high = new_reg(RegClass::kB32);
    put("mov.u32 ", lane, ", %laneid");
    if (column_major) {  // row (L & 7) + 8 (L >> 4), column 8 ((L >> 3) & 1)
      put("and.b32 ", row, ", ", lane, ", 7");
      put("shr.u32 ", high, ", ", lane, ", 4");
      put("shl.b32 ", high, ", ", high, ", 3");
      put("add.s32 ", row, ", ", row, ", ", high);
      put("shr.u32 ", column, ", ", lane, ", 3");
      put("and.b32 ", column, ", ", column, ", 1");
      put("shl.b32 ", column, ", ", column, ", 3");
    } else {  // row L & 15, column 8 (L >> 4)
      put("and.b32 ", row, ", ", lane, ", 15");
      put("shr.u32 ", column, ", ", lane, ", 4");
      put("shl.b32 ", column, ", ", column, ", 3");
    }
    put("mad.lo.s32 ", column, ", ", row, ", ", stride, ", ", column);
    put("mad.lo.s32 ", into, ", ", column, ", ", elem, ", ", shared_base(s.array));
    return out;
  };
  std::string lanes;
  if (std::optional<int64_t> known = integer_operand(s.operands[1])) {
    lanes = prologue_register(absl::StrCat("ldmatrix ", s.array, "/", *known, "/", column_major), RegClass::kB32,
                              [&](const std::string& reg) { return lane_part(absl::StrCat(*known), reg); });
  } else {
    ASSIGN_OR_RETURN(PtxValue stride, expr(s.operands[1]));
    ASSIGN_OR_RETURN(stride, cast(stride, DType::kI32));
    lanes = new_reg(RegClass::kB32);
    body_.append(lane_part(stride.reg, lanes));
  }
  ASSIGN_OR_RETURN(std::string address, shared_address(lanes, s.operands[0], elem));
  line("ldmatrix.sync.aligned.m8n8.x4", trans ? ".trans" : "", ".shared.b16 ", matrix_regs(s.id, 0, 4), ", [",
       address, "]");
  return absl::OkStatus();
}

absl::Status FunctionEmitter::matrix_store(const Stmt& s) {
  ASSIGN_OR_RETURN(const MatrixVariable* m, matrix(s.id, "matrix_store"));
  if (m->use != MatrixUse::kAccumulator)
    return error(absl::StrCat("matrix_store of ", m->name, " (use ", av(simt::matrix_use_name(m->use)),
                              "); only accumulators are stored"));
  RETURN_IF_ERROR(check_matrix_region(s, "matrix_store", DType::kF32, false));
  // Pairs of columns 2t, 2t + 1 are adjacent; when offset and stride are provably even each
  // pair is 8-byte aligned (shared arrays are 16-byte aligned) and goes out as one v2 store.
  const bool pairs = known_even(s.operands[0], unrolled_) && known_even(s.operands[1], unrolled_);
  ASSIGN_OR_RETURN(PtxValue offset, expr(s.operands[0]));
  ASSIGN_OR_RETURN(offset, cast(offset, DType::kI32));
  ASSIGN_OR_RETURN(PtxValue stride, expr(s.operands[1]));
  ASSIGN_OR_RETURN(stride, cast(stride, DType::kI32));
  // Lane L holds rows g and g + 8 (g = L >> 2), columns 2t, 2t + 1 (t = L & 3) of each n-block.
  std::string lane = new_reg(RegClass::kB32), group = new_reg(RegClass::kB32),
              column = new_reg(RegClass::kB32), index = new_reg(RegClass::kB32);
  line("mov.u32 ", lane, ", %laneid");
  line("shr.u32 ", group, ", ", lane, ", 2");
  line("and.b32 ", column, ", ", lane, ", 3");
  line("shl.b32 ", column, ", ", column, ", 1");
  line("mad.lo.s32 ", index, ", ", group, ", ", stride.reg, ", ", offset.reg);
  line("add.s32 ", index, ", ", index, ", ", column);
  std::string upper = new_reg(RegClass::kB32), lower = new_reg(RegClass::kB32);
  line("mad.lo.s32 ", upper, ", ", index, ", 4, ", shared_base(s.array));
  line("mad.lo.s32 ", lower, ", ", stride.reg, ", 32, ", upper);  // 8 rows of f32
  for (int block = 0; block < 2; ++block) {
    for (int half = 0; half < 2; ++half) {  // rows g, then g + 8
      const std::string& row = half == 0 ? upper : lower;
      const int first = block * 4 + half * 2;  // c0 / c2 of this n-block
      auto at = [&](int column) {  // [row address + bytes of column block * 8 + column]
        const int bytes = (block * 8 + column) * 4;
        return bytes == 0 ? absl::StrCat("[", row, "]") : absl::StrCat("[", row, "+", bytes, "]");
      };
      if (pairs) {
        line("st.shared.v2.f32 ", at(0), ", ", matrix_regs(s.id, first, 2));
      } else {
        line("st.shared.f32 ", at(0), ", ", matrix_reg(s.id, first));
        line("st.shared.f32 ", at(1), ", ", matrix_reg(s.id, first + 1));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::check_matrix_element(uint32_t id, int64_t element, std::string_view statement) const {
  ASSIGN_OR_RETURN(const MatrixVariable* m, matrix(id, statement));
  if (m->use != MatrixUse::kAccumulator)
    return error(absl::StrCat(av(statement), " of ", m->name, " (use ", av(simt::matrix_use_name(m->use)),
                              "); only accumulators are read and written by element"));
  if (element < 0 || element >= matrix_registers(MatrixUse::kAccumulator))
    return error(absl::StrCat(av(statement), ": element ", element, " of ", m->name, "; a lane holds ",
                              matrix_registers(MatrixUse::kAccumulator)));
  return absl::OkStatus();
}

absl::Status FunctionEmitter::matrix_mul_add(const Stmt& s) {
  ASSIGN_OR_RETURN(const MatrixVariable* c, matrix(s.id, "matrix_mul_add"));
  ASSIGN_OR_RETURN(const MatrixVariable* a, matrix(s.a, "matrix_mul_add"));
  ASSIGN_OR_RETURN(const MatrixVariable* b, matrix(s.b, "matrix_mul_add"));
  if (c->use != MatrixUse::kAccumulator || a->use != MatrixUse::kA || b->use != MatrixUse::kB)
    return error(absl::StrCat("matrix_mul_add ", c->name, " += ", a->name, " * ", b->name,
                              ": needs an accumulator, an A and a B matrix, has ",
                              av(simt::matrix_use_name(c->use)), ", ", av(simt::matrix_use_name(a->use)),
                              ", ", av(simt::matrix_use_name(b->use))));
  if (a->type != b->type)
    return error(absl::StrCat("matrix_mul_add: ", a->name, " is ", av(dtype_name(a->type)), ", ",
                              b->name, " is ", av(dtype_name(b->type)), "; A and B must match"));
  // Two m16n8k16 products: n-block 0 (B registers 0, 1; C registers 0-3) and n-block 1 (B 2, 3;
  // C 4-7), each with all of A.
  const std::string instruction = absl::StrCat(kMmaInstruction, ".row.col.f32.", ptx_type(a->type),
                                               ".", ptx_type(b->type), ".f32 ");
  for (int block = 0; block < 2; ++block) {
    const std::string accumulator = matrix_regs(s.id, block * 4, 4);
    line(instruction, accumulator, ", ", matrix_regs(s.a, 0, 4), ", ",
         matrix_regs(s.b, block * 2, 2), ", ", accumulator);
  }
  return absl::OkStatus();
}

// Accumulator register 2j, 2j + 1 (row g + 8 (j & 1), columns 2t + 8 (j >> 1) and the next) are
// exactly the two elements A register j holds (see the layouts above): one cvt packs them, the
// lower column into the low half (cvt's second source).
absl::Status FunctionEmitter::matrix_convert(const Stmt& s) {
  ASSIGN_OR_RETURN(const MatrixVariable* a, matrix(s.id, "matrix_convert"));
  ASSIGN_OR_RETURN(const MatrixVariable* c, matrix(s.a, "matrix_convert"));
  if (a->use != MatrixUse::kA || c->use != MatrixUse::kAccumulator)
    return error(absl::StrCat("matrix_convert ", a->name, " = ", c->name, ": needs an A matrix and an accumulator, has ",
                              av(simt::matrix_use_name(a->use)), " and ", av(simt::matrix_use_name(c->use))));
  for (int j = 0; j < matrix_registers(MatrixUse::kA); ++j)
    line(absl::StrCat("cvt.rn.", ptx_type(a->type), "x2.f32 ", matrix_reg(s.id, j), ", ", matrix_reg(s.a, 2 * j + 1),
                      ", ", matrix_reg(s.a, 2 * j)));
  return absl::OkStatus();
}

}  // namespace tilert::cuda
