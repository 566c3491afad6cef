// The PTX emitter's matrix statements (ldmatrix + mma.sync.m16n8k16): hand-built SIMT functions
// assembled with ptxas for sm_80 and sm_90a (f16 and bf16, constant and run-time offsets, static
// and dynamic shared memory, many accumulators), the instructions and operands in the text, and
// an error naming the function and the cause for each kind of bad input.
#include <doctest/doctest.h>

#include "backends/cuda/ptx_emit.h"
#include "ptx_test_util.h"

namespace tilert::cuda {
namespace {

using namespace testing;
using simt::Expr;
using simt::MatrixUse;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string emit_or_fail(const simt::Function& f, const char* target_name) {
  absl::StatusOr<std::string> ptx = emit_ptx(f, target(target_name));
  INFO(ptx.status().ToString());
  REQUIRE(ptx.ok());
  return *ptx;
}

absl::Status emit_status(const simt::Function& f, const char* target_name = "ptx:sm_80") {
  return emit_ptx(f, target(target_name)).status();
}

TEST_CASE("a tensor-core product assembles for sm_80 and sm_90a, f16 and bf16, one and two warps") {
  for (DType input : {DType::kF16, DType::kBF16})
    for (int warps : {1, 2}) {
      INFO(dtype_name(input), ", ", warps, " warps");
      check_assembles(matrix_product_kernel(input, warps));
    }
}

TEST_CASE("the matrix instructions and their operands") {
  std::string ptx = emit_or_fail(matrix_product_kernel(DType::kF16, 1), "ptx:sm_80");
  for (const char* text : {
           ".reg .f32 %mat0_<8>;", ".reg .b32 %mat1_<4>;", ".reg .b32 %mat2_<4>;", "%laneid",
           // A without, B with .trans
           "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%mat1_0, %mat1_1, %mat1_2, %mat1_3}, [",
           "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%mat2_0, %mat2_1, %mat2_2, %mat2_3}, [",
           // n-block 0: B registers 0, 1 and C 0-3; n-block 1: B 2, 3 and C 4-7
           "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%mat0_0, %mat0_1, %mat0_2, %mat0_3}, "
           "{%mat1_0, %mat1_1, %mat1_2, %mat1_3}, {%mat2_0, %mat2_1}, {%mat0_0, %mat0_1, %mat0_2, %mat0_3};",
           "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%mat0_4, %mat0_5, %mat0_6, %mat0_7}, "
           "{%mat1_0, %mat1_1, %mat1_2, %mat1_3}, {%mat2_2, %mat2_3}, {%mat0_4, %mat0_5, %mat0_6, %mat0_7};",
           "mov.f32 %mat0_7, ",
           // constant, even offset and stride: pairs of columns in one store
           "st.shared.v2.f32 [", "], {%mat0_0, %mat0_1};", "+32], {%mat0_4, %mat0_5};",
       }) {
    INFO(text, "\n", ptx);
    CHECK(contains(ptx, text));
  }
  CHECK_FALSE(contains(ptx, ".local"));
  // The k loop is unrolled: two loads of each matrix, four mma.
  size_t mma = 0;
  for (size_t at = ptx.find("mma.sync"); at != std::string::npos; at = ptx.find("mma.sync", at + 1)) ++mma;
  CHECK(mma == 4);

  // An odd offset: pairs of columns are not 8-byte aligned, one element per store.
  simt::Function odd = matrix_product_kernel(DType::kF16, 1);
  odd.body[5] = matrix_store(0, 2, i32(1), i32(20));
  std::string odd_ptx = emit_or_fail(odd, "ptx:sm_80");
  CHECK(contains(odd_ptx, "st.shared.f32 [%r"));
  CHECK_FALSE(contains(odd_ptx, "st.shared.f32 [%rd"));  // 32-bit shared addresses
  CHECK_FALSE(contains(odd_ptx, "st.shared.v2.f32"));
  check_assembles(odd);

  std::string bf16 = emit_or_fail(matrix_product_kernel(DType::kBF16, 2), "ptx:sm_90a");
  CHECK(contains(bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "));
  // Offsets from the subgroup id are run-time values: one element per store.
  CHECK(contains(bf16, "st.shared.f32 ["));
  CHECK_FALSE(contains(bf16, "st.shared.v2.f32"));
}

TEST_CASE("column-major matrix loads swap .trans and address the stored blocks in fragment order") {
  // The same product with both loads marked column-major (transposed gemm operands): A takes
  // .trans, B loses it, registers come out in fragment order (no moves pair them up for the mma),
  // and lanes 8-15 name stored rows 0-7 at column 8: row (L & 7) + 8 (L >> 4), column
  // 8 ((L >> 3) & 1).
  simt::Function f = matrix_product_kernel(DType::kF16, 1);
  for (simt::Stmt& s : f.body[4].body)
    if (s.kind == simt::StmtKind::kMatrixLoad) s.a = 1;
  std::string ptx = emit_or_fail(f, "ptx:sm_80");
  for (const char* text : {
           "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%mat1_0, %mat1_1, %mat1_2, %mat1_3}, [",
           "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%mat2_0, %mat2_1, %mat2_2, %mat2_3}, [",
           ", %laneid;\n\tand.b32 %r", ", 7;\n",
       }) {
    INFO(text, "\n", ptx);
    CHECK(contains(ptx, text));
  }
  CHECK_FALSE(contains(ptx, "b16 {%mat1_0, %mat1_2, "));
  check_assembles(f);
}

TEST_CASE("accumulator elements are read and written as the lane's registers") {
  // Before the store: element 3 of the accumulator doubled, element 6 set from element 0.
  simt::Function f = matrix_product_kernel(DType::kF16, 1);
  simt::Stmt twice;
  twice.kind = simt::StmtKind::kMatrixElementStore;
  twice.id = 0;
  twice.a = 3;
  twice.operands = {Expr::binary(BinaryOp::kMul, Expr::matrix_element(0, 3), f32(2.0))};
  simt::Stmt copy = twice;
  copy.a = 6;
  copy.operands = {Expr::matrix_element(0, 0)};
  f.body.insert(f.body.begin() + 5, {twice, copy});
  std::string ptx = emit_or_fail(f, "ptx:sm_80");
  CHECK(contains(ptx, "mov.f32 %mat0_3, "));
  CHECK(contains(ptx, "mov.f32 %mat0_6, %mat0_0"));
  check_assembles(f);

  simt::Function bad = f;
  bad.body[5].a = 8;  // a lane holds 8 elements
  CHECK(contains(emit_status(bad).ToString(), "element 8 of acc"));
  bad = f;
  bad.body[6].operands = {Expr::matrix_element(1, 0)};  // an A matrix
  CHECK(contains(emit_status(bad).ToString(), "only accumulators are read and written by element"));
}

TEST_CASE("an accumulator converts into an A operand register pair by register pair") {
  // After the product: the accumulator (as f16 / bf16) becomes the A of a second product into a
  // second accumulator, which the store then writes: C = (A B) B + 0.25 per element.
  for (DType input : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(input));
    simt::Function f = matrix_product_kernel(input, 1);
    f.matrices.push_back({"p", simt::MatrixUse::kA, input});             // 3
    f.matrices.push_back({"acc2", simt::MatrixUse::kAccumulator, DType::kF32});  // 4
    simt::Stmt convert;
    convert.kind = simt::StmtKind::kMatrixConvert;
    convert.id = 3;
    convert.a = 0;
    f.body.insert(f.body.begin() + 5, {convert, matrix_fill(4, f32(0.25)), matrix_mul_add(4, 3, 2)});
    f.body[8].id = 4;  // the store writes the second accumulator
    const std::string type = input == DType::kF16 ? "f16" : "bf16";
    std::string ptx = emit_or_fail(f, "ptx:sm_80");
    // A register j holds accumulator registers 2j (low half) and 2j + 1 (high half).
    for (int j = 0; j < 4; ++j) {
      const std::string text = "cvt.rn." + type + "x2.f32 %mat3_" + std::to_string(j) + ", %mat0_" +
                               std::to_string(2 * j + 1) + ", %mat0_" + std::to_string(2 * j) + ";";
      INFO(text);
      CHECK(contains(ptx, text));
    }
    check_assembles(f);
    simt::Function bad = f;
    bad.body[5].a = 1;  // an A matrix as the source
    CHECK(contains(emit_status(bad).ToString(), "needs an A matrix and an accumulator"));
  }
}

TEST_CASE("matrix statements address dynamic shared memory") {
  simt::Function f = matrix_product_kernel(DType::kF16, 2);
  f.shared.push_back({"pad", DType::kF32, 16 * 1024});  // 64 KiB more: over the static limit
  REQUIRE(uses_dynamic_shared(f));
  std::string ptx = emit_or_fail(f, "ptx:sm_90a");
  CHECK(contains(ptx, "tilert_dynamic_shared"));
  CHECK_FALSE(contains(ptx, ".shared .align 16 .b8 shared_"));
  check_assembles(f);
}

TEST_CASE("filled A and B matrices, and sixteen accumulators live in registers") {
  simt::Function f;
  f.name = "many_accumulators";
  f.threads = 128;
  f.shared.push_back({"out", DType::kF32, 4 * 16 * 256});
  f.variables.push_back({"j", DType::kI32, 0});
  for (DType input : {DType::kF16, DType::kBF16}) {
    f.matrices.push_back({"a", MatrixUse::kA, input});
    f.matrices.push_back({"b", MatrixUse::kB, input});
  }
  for (int j = 0; j < 16; ++j) f.matrices.push_back({"acc" + std::to_string(j), MatrixUse::kAccumulator, DType::kF32});
  f.body.push_back(matrix_fill(0, f32(1.0)));
  f.body.push_back(matrix_fill(1, f32(0.5)));
  f.body.push_back(matrix_fill(2, f32(-1.0)));
  f.body.push_back(matrix_fill(3, f32(2.0)));
  // acc_j: the 16 accumulators, indexed through an unrolled loop (matrix ids are constants).
  for (int j = 0; j < 16; ++j) {
    f.body.push_back(matrix_fill(4 + j, f32(j)));
    f.body.push_back(matrix_mul_add(4 + j, j % 2 ? 2 : 0, j % 2 ? 3 : 1));
  }
  Expr warp_base = Expr::binary(BinaryOp::kMul, Expr::builtin(simt::Builtin::kSubgroupId), i32(16 * 256));
  for (int j = 0; j < 16; ++j)
    f.body.push_back(matrix_store(4 + j, 0, Expr::binary(BinaryOp::kAdd, warp_base, i32(j * 16)), i32(256)));
  check_assembles(f);
  std::string ptx = emit_or_fail(f, "ptx:sm_80");
  CHECK(contains(ptx, ".reg .f32 %mat19_<8>;"));
  CHECK(contains(ptx, "{%mat2_0, %mat2_1, %mat2_2, %mat2_3}, {%mat3_0, %mat3_1}"));
  CHECK(contains(ptx, "cvt.rn.bf16.f32"));  // the bf16 fill value
  // subgroup_id * 4096 + 16 j: provably even though not constant, so columns go out in pairs.
  CHECK(contains(ptx, "st.shared.v2.f32"));
  CHECK_FALSE(contains(ptx, "st.shared.f32"));
  CHECK_FALSE(contains(ptx, ".local"));
}

TEST_CASE("bad matrix statements are errors naming the function and the cause") {
  auto expect = [](const simt::Function& f, absl::StatusCode code, const char* text,
                   const char* target_name = "ptx:sm_80") {
    absl::Status s = emit_status(f, target_name);
    INFO(s.ToString());
    CHECK(s.code() == code);
    CHECK(contains(std::string(s.message()), "matrix_product"));
    CHECK(contains(std::string(s.message()), text));
  };
  const simt::Function good = matrix_product_kernel(DType::kF16, 1);
  // The mul_add statement sits in the unrolled k loop (body index 4).
  auto with_mul_add = [&](simt::Stmt s) {
    simt::Function f = good;
    f.body[4].body[2] = std::move(s);
    return f;
  };
  expect(with_mul_add(matrix_mul_add(0, 7, 2)), absl::StatusCode::kInvalidArgument,
         "matrix_mul_add: no matrix #7");
  expect(with_mul_add(matrix_mul_add(9, 1, 2)), absl::StatusCode::kInvalidArgument, "no matrix #9");
  expect(with_mul_add(matrix_mul_add(0, 2, 1)), absl::StatusCode::kInvalidArgument,
         "needs an accumulator, an A and a B matrix");
  {
    simt::Function f = good;
    f.matrices[2].type = DType::kBF16;  // B of bf16, A of f16 (and the B tile still f16)
    f.shared[1].type = DType::kBF16;
    f.params[1].type = DType::kBF16;
    expect(f, absl::StatusCode::kInvalidArgument, "a is f16, b is bf16; A and B must match");
  }
  {
    simt::Function f = good;
    f.body[5] = matrix_store(1, 2, i32(0), i32(20));  // an A matrix stored
    expect(f, absl::StatusCode::kInvalidArgument, "matrix_store of a (use a); only accumulators");
  }
  {
    simt::Function f = good;
    f.body[4].body[0] = matrix_load(0, 0, i32(0), i32(40));  // a load into the accumulator
    expect(f, absl::StatusCode::kInvalidArgument, "matrix_load into accumulator acc");
  }
  {
    simt::Function f = good;
    f.body[4].body[0] = matrix_load(1, 2, i32(0), i32(40));  // from the f32 C tile
    expect(f, absl::StatusCode::kInvalidArgument, "shared array c_tile holds f32, the matrix f16");
  }
  {
    simt::Function f = good;
    f.body[4].body[0] = matrix_load(1, 0, i32(4), i32(40));
    expect(f, absl::StatusCode::kInvalidArgument, "offset 4 in a_tile is not a multiple of 8");
    f.body[4].body[0] = matrix_load(1, 0, i32(0), i32(36));
    expect(f, absl::StatusCode::kInvalidArgument, "stride 36 in a_tile is not a multiple of 8");
    f.body[4].body[0] = matrix_load(1, 0, i32(40), i32(40));  // rows 1..16 of a 16-row tile
    expect(f, absl::StatusCode::kInvalidArgument, "elements 40..655 are outside a_tile[640]");
    f.body[4].body[0] = matrix_load(1, 7, i32(0), i32(40));
    expect(f, absl::StatusCode::kInvalidArgument, "matrix_load: no shared array #7");
    f.body[4].body[0].space = simt::Space::kGlobal;
    expect(f, absl::StatusCode::kUnimplemented, "matrix_load from global memory");
  }
  {
    simt::Function f = good;
    f.body[5] = matrix_store(0, 2, i32(-2), i32(20));
    expect(f, absl::StatusCode::kInvalidArgument, "elements -2..313 are outside c_tile[320]");
  }
  {
    simt::Function f = good;
    f.threads = 48;
    expect(f, absl::StatusCode::kInvalidArgument, "threads 48 is not a multiple of 32");
  }
  {
    simt::Function f = good;
    f.matrices[0].type = DType::kF16;
    expect(f, absl::StatusCode::kUnimplemented, "accumulator acc of f16; accumulators are f32");
    f = good;
    f.matrices[1].rows = 32;
    expect(f, absl::StatusCode::kUnimplemented, "matrix a is 32x16; only 16x16");
    f = good;
    f.matrices[1].type = DType::kI8;
    expect(f, absl::StatusCode::kUnimplemented, "A and B are f16 or bf16");
  }
  {
    simt::Function f = good;
    f.body[0] = matrix_fill(3, f32(0));
    expect(f, absl::StatusCode::kInvalidArgument, "matrix_fill: no matrix #3");
    f.body[0] = matrix_fill(0, f32(0));
    f.body[0].operands.clear();
    expect(f, absl::StatusCode::kInvalidArgument, "needs 1 operands, has 0");
  }
  // A target without mma.sync.m16n8k16: an older arch, or no matrix shapes at all.
  lowering::TargetDescription old = target("ptx:sm_80");
  old.arch = "sm_75";
  absl::Status s = emit_ptx(good, old).status();
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(contains(std::string(s.message()), "needs mma.sync.m16n8k16 and ldmatrix (sm_80 or newer)"));
  lowering::TargetDescription shapeless = target("ptx:sm_90a");
  shapeless.matrix_shapes.clear();
  CHECK(emit_ptx(good, shapeless).status().code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("workgroup-scope matrices and tensor-addressed windows are Unimplemented for PTX") {
  // Workgroup-scope matrices are SPIR-V's (VK_NV_cooperative_matrix2): PTX holds matrices in the
  // registers of one warp.
  simt::Function f = matrix_product_kernel(DType::kF16, 1);
  f.matrices[1].scope = simt::MatrixScope::kWorkgroup;
  f.matrices[1].rows = 128;
  absl::Status s = emit_status(f);
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(contains(std::string(s.message()), "PTX for function matrix_product"));
  CHECK(contains(std::string(s.message()), "matrix a has workgroup scope"));

  // A tensor-addressed load, even of a subgroup matrix, is refused by name (not an unknown kind).
  f = matrix_product_kernel(DType::kF16, 1);
  simt::Stmt window;
  window.kind = simt::StmtKind::kMatrixTensorLoad;
  window.id = 1;
  window.space = simt::Space::kGlobal;
  window.array = 0;
  window.operands = {i32(0), i32(0), i32(16), i32(16), i32(16)};
  f.body[4].body[0] = window;
  s = emit_status(f);
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(contains(std::string(s.message()), "matrix_tensor_load (a tensor-addressed workgroup matrix) is not emitted"));
  window.kind = simt::StmtKind::kMatrixTensorStore;
  window.id = 0;
  f.body[4].body[0] = window;
  s = emit_status(f);
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(contains(std::string(s.message()), "matrix_tensor_store"));
}

}  // namespace
}  // namespace tilert::cuda
