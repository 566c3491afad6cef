// Matrix statements in the SPIR-V emitter (spirv_emit/matrices.cc): with cooperative_matrix the
// module uses SPV_KHR_cooperative_matrix under the Vulkan memory model and validates for Vulkan
// 1.2 and 1.3 (where a validator here knows the extension; the instructions are checked word by
// word either way); bf16 matrices are SPV_KHR_bfloat16 types where the device has them. Without
// cooperative matrices (bf16 ones), and for malformed statements, the error names the kernel
// and the reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv_emit/validate.h"
#include "tests/backends/vulkan/spirv_emit_util.h"

namespace tilert::vulkan {
namespace {

namespace coop = spirv::cooperative_matrix;
using simt::Expr;
using simt::MatrixUse;
using simt::Space;
using namespace testing;

absl::Status emit_error(const simt::Function& f, const SpirvOptions& o) {
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(f, o);
  return words.status();
}

bool contains(const absl::Status& s, std::string_view text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST_CASE("matrix statements validate for Vulkan 1.2 and 1.3 with cooperative matrices") {
  simt::Function f = matrix_product_function(32);
  for (SpirvOptions base : {minimal_options(), full_options()}) {
    SpirvOptions o = with_cooperative_matrix(base);
    CAPTURE(o.spirv_version);
    std::vector<uint32_t> words = emit_valid(f, o);
    CHECK(has_capability(words, coop::kCapability));
    CHECK(has_capability(words, spv::Capability::VulkanMemoryModel));
    CHECK(has_capability(words, spv::Capability::Float16));
    auto model = instructions(words, spv::Op::OpMemoryModel);
    REQUIRE(model.size() == 1);
    CHECK(model[0][1] == static_cast<uint32_t>(spv::MemoryModel::Vulkan));

    // Three matrix types: f16 A and B, f32 accumulator, all 16x16 with Subgroup scope.
    auto types = instructions(words, coop::kOpTypeCooperativeMatrix);
    CHECK(types.size() == 3);
    auto loads = instructions(words, coop::kOpLoad);
    auto stores = instructions(words, coop::kOpStore);
    auto products = instructions(words, coop::kOpMulAdd);
    REQUIRE(loads.size() == 2);
    REQUIRE(stores.size() == 1);
    CHECK(products.size() == 1);
    // Result type, result, pointer, layout, stride, NonPrivatePointer (shared memory under the
    // Vulkan memory model); a store: pointer, object, layout, stride, NonPrivatePointer.
    const uint32_t non_private = static_cast<uint32_t>(spv::MemoryAccessMask::NonPrivatePointer);
    CHECK(loads[0].size() == 6);
    CHECK(loads[0][5] == non_private);
    CHECK(stores[0].size() == 5);
    CHECK(stores[0][4] == non_private);
    // The fill is one OpCompositeConstruct with one constituent.
    bool fill = false;
    for (const auto& c : instructions(words, spv::Op::OpCompositeConstruct)) fill |= c.size() == 3;
    CHECK(fill);
    // Barriers make their storage classes available and visible under the Vulkan memory model.
    CHECK(instructions(words, spv::Op::OpControlBarrier).size() == 2);
  }
}

TEST_CASE("without cooperative matrices, matrix statements are Unimplemented naming the kernel") {
  absl::Status s = emit_error(matrix_product_function(32), full_options());
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "kernel matrix_product"));
  CHECK(contains(s, "VK_KHR_cooperative_matrix"));

  // A matrix statement in a function that declares no matrix.
  simt::Function bare;
  bare.name = "bare";
  bare.threads = 32;
  bare.body = {matrix_mul_add(0, 1, 2)};
  s = emit_error(bare, full_options());
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "kernel bare: matrix_mul_add"));
}

TEST_CASE("malformed matrix statements are InvalidArgument naming the statement") {
  const SpirvOptions o = with_cooperative_matrix(full_options());
  auto with_statement = [](simt::Stmt s) {
    simt::Function f = matrix_product_function(32);
    f.body = {std::move(s)};
    return f;
  };
  absl::Status s = emit_error(with_statement(matrix_load(2, 0, Expr::int_const(0), Expr::int_const(32))), o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_load: matrix acc has use accumulator, expected A or B"));

  s = emit_error(with_statement(matrix_mul_add(2, 1, 0)), o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_mul_add: matrix mb has use B, expected A"));

  s = emit_error(with_statement(matrix_fill(7, Expr::float_const(0))), o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_fill: no matrix with index 7"));

  s = emit_error(with_statement(matrix_store(2, 0, Expr::int_const(0), Expr::int_const(16))), o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_store of matrix acc (f32) through shared array a_sh of f16"));

  simt::Stmt no_stride = matrix_load(0, 0, Expr::int_const(0), Expr::int_const(32));
  no_stride.operands.pop_back();
  s = emit_error(with_statement(no_stride), o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_load has 1 operands, expected 2"));

  // f16 shared arrays are 16-bit only with float16 arithmetic; widened ones cannot feed a matrix.
  SpirvOptions widened = o;
  widened.float16_arithmetic = false;
  s = emit_error(matrix_product_function(32), widened);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "widened to 32 bits"));

  // Only 16x16 matrices, and only f16 A / B and f32 accumulators.
  simt::Function f = matrix_product_function(32);
  f.matrices[2].rows = 8;
  s = emit_error(f, o);
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "matrix acc is 8x16"));
  f = matrix_product_function(32);
  f.matrices[2].type = DType::kF16;
  s = emit_error(f, o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix acc: accumulator matrix of f16"));
}

// Chunk-staged f16 tiles (register pipelines): the shared arrays are 16-byte vectors of u32 words,
// each chunk is one vector store, and the cooperative matrices load through the vectors.
// The id of the module's u32 4-vector type (0: none).
uint32_t uvec4_type(const std::vector<uint32_t>& words) {
  uint32_t u32 = 0, uvec4 = 0;
  for (const auto& t : instructions(words, spv::Op::OpTypeInt))
    if (t[1] == 32 && t[2] == 0) u32 = t[0];
  for (const auto& t : instructions(words, spv::Op::OpTypeVector))
    if (u32 != 0 && t[1] == u32 && t[2] == 4) uvec4 = t[0];
  return uvec4;
}

// How many array types have `element` as their element type.
int arrays_of(const std::vector<uint32_t>& words, uint32_t element) {
  int n = 0;
  for (const auto& t : instructions(words, spv::Op::OpTypeArray)) n += t[1] == element;
  return n;
}

// matrix_product_function with its shared A and B tiles filled by chunk_load / chunk_store
// (16 bytes a thread at a time), as the lowering stages tiles for matrices.
simt::Function chunk_staged_product(DType operands) {
  simt::Function f = matrix_product_function(32);
  f.params[0].type = f.params[1].type = f.shared[0].type = f.shared[1].type = operands;
  f.matrices[0].type = f.matrices[1].type = operands;
  f.variables.push_back({"chunk", DType::kU32, 12});
  const uint32_t chunk = static_cast<uint32_t>(f.variables.size() - 1);
  Expr lid = Expr::builtin(simt::Builtin::kLocalId);
  auto at = [&](int64_t first) {
    return Expr::binary(BinaryOp::kAdd, Expr::binary(BinaryOp::kMul, lid, Expr::int_const(8)), Expr::int_const(first));
  };
  auto chunk_load = [&](uint32_t global, int32_t word, int64_t first) {
    simt::Stmt s;
    s.kind = simt::StmtKind::kChunkLoad;
    s.id = chunk;
    s.array = global;
    s.operands = {Expr::int_const(word), at(first)};
    return s;
  };
  auto chunk_store = [&](uint32_t shared, int32_t word, int64_t first) {
    simt::Stmt s;
    s.kind = simt::StmtKind::kChunkStore;
    s.space = Space::kShared;
    s.id = shared;
    s.array = chunk;
    s.operands = {at(first), Expr::int_const(word)};
    return s;
  };
  // a_sh (512 halves) is 64 chunks, b_sh (256) 32: two and one per thread.
  f.body[0] = chunk_load(0, 0, 0);
  f.body[1] = chunk_load(0, 4, 256);
  f.body.insert(f.body.begin() + 2, {chunk_load(1, 8, 0), chunk_store(0, 0, 0), chunk_store(0, 4, 256),
                                     chunk_store(1, 8, 0)});
  return f;
}

TEST_CASE("bf16 matrices are Unimplemented without SpirvOptions::bfloat16_cooperative_matrix") {
  absl::Status s = emit_error(chunk_staged_product(DType::kBF16), with_cooperative_matrix(full_options()));
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "kernel matrix_product: matrix ma: bf16"));
  CHECK(contains(s, "VK_KHR_shader_bfloat16"));
}

TEST_CASE("bf16 matrices are SPV_KHR_bfloat16 types loaded from packed bf16 tiles") {
  simt::Function f = chunk_staged_product(DType::kBF16);
  SpirvOptions o = with_cooperative_matrix(full_options());
  o.bfloat16_cooperative_matrix = true;
  // Validated only where the linked SPIRV-Tools knows the extension (Debian 12's does not).
  absl::StatusOr<std::vector<uint32_t>> emitted = emit_spirv(f, o);
  REQUIRE_MESSAGE(emitted.ok(), emitted.status().ToString());
  std::vector<uint32_t> words = validates_bfloat16() ? emit_valid(f, o) : *emitted;
  std::vector<std::string> names = extensions(words);
  CHECK(std::find(names.begin(), names.end(), "SPV_KHR_bfloat16") != names.end());
  CHECK(std::find(names.begin(), names.end(), "SPV_KHR_cooperative_matrix") != names.end());
  CHECK(has_capability(words, spirv::bfloat16::kCapabilityType));
  CHECK(has_capability(words, spirv::bfloat16::kCapabilityCooperativeMatrix));
  // One 16-bit float type, with the BFloat16KHR encoding; A and B matrices of it.
  uint32_t bf16 = 0;
  for (const auto& t : instructions(words, spv::Op::OpTypeFloat)) {
    if (t[1] != 16) continue;
    CHECK(bf16 == 0);
    REQUIRE(t.size() == 3);
    CHECK(t[2] == spirv::bfloat16::kEncodingBFloat16);
    bf16 = t[0];
  }
  REQUIRE(bf16 != 0);
  int bf16_matrices = 0;
  for (const auto& t : instructions(words, coop::kOpTypeCooperativeMatrix)) bf16_matrices += t[1] == bf16;
  CHECK(bf16_matrices == 2);
  // The tiles are arrays of u32 4-vectors (two bf16 a word: half the bytes of widened ones) and
  // the matrices are loaded from them.
  const uint32_t uvec4 = uvec4_type(words);
  REQUIRE(uvec4 != 0);
  CHECK(arrays_of(words, uvec4) == 2);
  CHECK(instructions(words, coop::kOpLoad).size() == 2);
  CHECK(instructions(words, coop::kOpMulAdd).size() == 1);

  // Tiles filled element by element are packed as well: a matrix cannot load widened elements.
  simt::Function element_filled = matrix_product_function(32);
  element_filled.params[0].type = element_filled.params[1].type = DType::kBF16;
  element_filled.shared[0].type = element_filled.shared[1].type = DType::kBF16;
  element_filled.matrices[0].type = element_filled.matrices[1].type = DType::kBF16;
  absl::StatusOr<std::vector<uint32_t>> packed = emit_spirv(element_filled, o);
  REQUIRE_MESSAGE(packed.ok(), packed.status().ToString());
  CHECK(arrays_of(*packed, uvec4_type(*packed)) == 2);
}

TEST_CASE("chunk-stored f16 tiles are arrays of u32 4-vectors that matrices load from") {
  simt::Function f = chunk_staged_product(DType::kF16);
  for (SpirvOptions base : {minimal_options(), full_options()}) {
    SpirvOptions o = with_cooperative_matrix(base);
    CAPTURE(o.spirv_version);
    std::vector<uint32_t> words = emit_valid(f, o);
    const uint32_t uvec4 = uvec4_type(words);
    REQUIRE(uvec4 != 0);
    CHECK(arrays_of(words, uvec4) == 2);  // a_sh and b_sh; c_sh stays f32
    // Three 16-byte stores of whole vectors (one per chunk), no 16-bit component stores.
    std::vector<uint32_t> vector_pointers;
    for (const auto& t : instructions(words, spv::Op::OpTypePointer))
      if (t[1] == static_cast<uint32_t>(spv::StorageClass::Workgroup) && t[2] == uvec4) vector_pointers.push_back(t[0]);
    REQUIRE(vector_pointers.size() == 1);
    std::vector<uint32_t> vector_addresses;
    for (const auto& c : instructions(words, spv::Op::OpAccessChain))
      if (c[0] == vector_pointers[0]) vector_addresses.push_back(c[1]);
    int vector_stores = 0;
    for (const auto& st : instructions(words, spv::Op::OpStore))
      for (uint32_t p : vector_addresses) vector_stores += st[0] == p;
    CHECK(vector_stores == 3);
    auto loads = instructions(words, coop::kOpLoad);
    REQUIRE(loads.size() == 2);
    for (const auto& l : loads) {
      bool through_vector = false;
      for (uint32_t p : vector_addresses) through_vector |= l[2] == p;
      CHECK(through_vector);
    }
  }
}

}  // namespace
}  // namespace tilert::vulkan
