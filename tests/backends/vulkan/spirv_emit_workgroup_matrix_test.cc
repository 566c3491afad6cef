// Workgroup-scope matrices in the SPIR-V emitter (spirv_emit/matrices.cc): a GEMM of 128x64 and
// 64x256 workgroup matrices loaded from global arrays, its 128x256 f32 accumulator stored into a
// global array (converted to f16 / bf16 first), plainly or through SPV_NV_tensor_addressing
// windows; and what is refused without the options that allow each part.
//
// Debian 12's SPIRV-Tools (2023.1; spirv-val v2023.1) knows none of SPV_KHR_cooperative_matrix,
// SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing: it cannot even parse their
// capabilities. emit_valid() validates these modules where a newer validator is linked or named
// by TILERT_SPIRV_VAL and says when it could not; the tests check the instructions word by word
// in every case, so none of them passes by skipping.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "tests/backends/vulkan/spirv_emit_util.h"

namespace tilert::vulkan {
namespace {

namespace coop = spirv::cooperative_matrix;
namespace tensor = spirv::tensor_addressing;
using simt::Expr;
using namespace testing;

constexpr uint32_t kNonPrivate = static_cast<uint32_t>(spv::MemoryAccessMask::NonPrivatePointer);
constexpr uint32_t kWorkgroupScope = static_cast<uint32_t>(spv::Scope::Workgroup);

absl::Status emit_error(const simt::Function& f, const SpirvOptions& o) { return emit_spirv(f, o).status(); }

bool contains(const absl::Status& s, std::string_view text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

bool has_extension(const std::vector<uint32_t>& words, std::string_view name) {
  std::vector<std::string> names = extensions(words);
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The instruction of opcode `op` whose result id (operand `result_at`) is `id`, or empty.
std::vector<uint32_t> defining(const std::vector<uint32_t>& words, spv::Op op, uint32_t id, size_t result_at = 1) {
  for (auto& i : instructions(words, op))
    if (i.size() > result_at && i[result_at] == id) return i;
  return {};
}

// A module's cooperative matrix types: id -> (component type, scope, rows, columns, use), the
// last four read from their constants.
using MatrixType = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;
std::map<uint32_t, MatrixType> matrix_types(const std::vector<uint32_t>& words) {
  std::map<uint32_t, MatrixType> types;
  for (const auto& t : instructions(words, coop::kOpTypeCooperativeMatrix)) {
    REQUIRE(t.size() == 6);
    types[t[0]] = {t[1], constant_value(words, t[2]), constant_value(words, t[3]), constant_value(words, t[4]),
                   constant_value(words, t[5])};
  }
  return types;
}

// The id of the module's OpTypeFloat of `width` (with the BFloat16KHR encoding or without).
uint32_t float_type(const std::vector<uint32_t>& words, uint32_t width, bool bfloat16 = false) {
  for (const auto& t : instructions(words, spv::Op::OpTypeFloat))
    if (t[1] == width && (t.size() == 3) == bfloat16) return t[0];
  return 0;
}

// Whether `pointer` is an OpAccessChain into a StorageBuffer variable whose element pointer type
// points at `pointee`.
bool storage_buffer_element(const std::vector<uint32_t>& words, uint32_t pointer, uint32_t pointee) {
  std::vector<uint32_t> chain = defining(words, spv::Op::OpAccessChain, pointer);
  if (chain.empty()) return false;
  std::vector<uint32_t> type = defining(words, spv::Op::OpTypePointer, chain[0], 0);
  return type.size() == 3 && type[1] == static_cast<uint32_t>(spv::StorageClass::StorageBuffer) && type[2] == pointee;
}

TEST_CASE("a workgroup GEMM has Workgroup-scope matrices of any shape, loaded and stored in global arrays") {
  const SpirvOptions o = with_workgroup_matrices();
  std::vector<uint32_t> words = emit_valid(workgroup_gemm_function({}), o);
  CHECK(words.at(1) == 0x00010600);
  for (spv::Capability c : {coop::kCapability, spv::Capability::VulkanMemoryModel, spv::Capability::Float16,
                            spv::Capability::StorageBuffer16BitAccess}) {
    CAPTURE(static_cast<uint32_t>(c));
    CHECK(has_capability(words, c));
  }
  CHECK(has_extension(words, coop::kExtension));
  CHECK(has_extension(words, tensor::kMatrixExtension));
  // Tensor addressing only where a tensor statement uses it.
  CHECK_FALSE(has_extension(words, tensor::kExtension));
  CHECK_FALSE(has_capability(words, tensor::kCapabilityTensorAddressing));
  CHECK_FALSE(has_capability(words, tensor::kCapabilityMatrixTensorAddressing));

  // A 128x64, B 64x256, the f32 accumulator 128x256 and the f16 one it is converted to.
  const uint32_t f16 = float_type(words, 16), f32 = float_type(words, 32);
  REQUIRE(f16 != 0);
  std::map<uint32_t, MatrixType> types = matrix_types(words);
  std::set<MatrixType> expected = {{f16, kWorkgroupScope, 128, 64, coop::kUseMatrixA},
                                   {f16, kWorkgroupScope, 64, 256, coop::kUseMatrixB},
                                   {f32, kWorkgroupScope, 128, 256, coop::kUseAccumulator},
                                   {f16, kWorkgroupScope, 128, 256, coop::kUseAccumulator}};
  std::set<MatrixType> seen;
  for (const auto& [id, t] : types) seen.insert(t);
  CHECK(seen == expected);
  uint32_t f32_accumulator = 0, f16_accumulator = 0;
  for (const auto& [id, t] : types) {
    if (t == MatrixType{f32, kWorkgroupScope, 128, 256, coop::kUseAccumulator}) f32_accumulator = id;
    if (t == MatrixType{f16, kWorkgroupScope, 128, 256, coop::kUseAccumulator}) f16_accumulator = id;
  }

  // The workgroup size is declared (SPV_NV_cooperative_matrix2 asks it of Workgroup scope).
  bool local_size = false;
  for (const auto& m : instructions(words, spv::Op::OpExecutionMode))
    local_size |= m.size() == 5 && m[1] == static_cast<uint32_t>(spv::ExecutionMode::LocalSize) && m[2] == 256;
  CHECK(local_size);

  // Loads: result type, result, pointer into a storage buffer of f16, row-major, the row pitch,
  // NonPrivatePointer (global memory under the Vulkan memory model).
  auto loads = instructions(words, coop::kOpLoad);
  REQUIRE(loads.size() == 2);
  std::multiset<uint32_t> pitches;
  for (const auto& l : loads) {
    REQUIRE(l.size() == 6);
    CHECK(storage_buffer_element(words, l[2], f16));
    CHECK(constant_value(words, l[3]) == coop::kLayoutRowMajor);
    pitches.insert(constant_value(words, l[4]));
    CHECK(l[5] == kNonPrivate);
  }
  CHECK(pitches == std::multiset<uint32_t>{136, 264});
  CHECK(instructions(words, coop::kOpMulAdd).size() == 1);

  // The store: the accumulator converted to f16 (OpFConvert of the loaded matrix), into c.
  auto stores = instructions(words, coop::kOpStore);
  REQUIRE(stores.size() == 1);
  REQUIRE(stores[0].size() == 5);
  CHECK(storage_buffer_element(words, stores[0][0], f16));
  std::vector<uint32_t> convert = defining(words, spv::Op::OpFConvert, stores[0][1]);
  REQUIRE(convert.size() == 3);
  CHECK(convert[0] == f16_accumulator);
  std::vector<uint32_t> loaded = defining(words, spv::Op::OpLoad, convert[2]);
  REQUIRE(!loaded.empty());
  CHECK(loaded[0] == f32_accumulator);
  CHECK(constant_value(words, stores[0][3]) == 264);
  CHECK(stores[0][4] == kNonPrivate);

  // Into an f32 array the accumulator is stored as it is.
  WorkgroupGemm f32_out;
  f32_out.output = DType::kF32;
  words = emit_valid(workgroup_gemm_function(f32_out), o);
  stores = instructions(words, coop::kOpStore);
  REQUIRE(stores.size() == 1);
  CHECK(storage_buffer_element(words, stores[0][0], float_type(words, 32)));
  CHECK(defining(words, spv::Op::OpFConvert, stores[0][1]).empty());
  CHECK(!defining(words, spv::Op::OpLoad, stores[0][1]).empty());
  CHECK(matrix_types(words).size() == 3);
}

TEST_CASE("tensor-addressed windows: a clamped 2-D layout with the IR's stride, sliced to the matrix") {
  WorkgroupGemm g;
  g.tensor = true;
  std::vector<uint32_t> words = emit_valid(workgroup_gemm_function(g), with_workgroup_matrices());
  CHECK(has_capability(words, tensor::kCapabilityTensorAddressing));
  CHECK(has_capability(words, tensor::kCapabilityMatrixTensorAddressing));
  CHECK(static_cast<uint32_t>(tensor::kCapabilityTensorAddressing) == 5439);
  CHECK(static_cast<uint32_t>(tensor::kCapabilityMatrixTensorAddressing) == 5433);
  CHECK(has_extension(words, tensor::kExtension));
  CHECK(has_extension(words, tensor::kMatrixExtension));
  CHECK(instructions(words, coop::kOpLoad).empty());
  CHECK(instructions(words, coop::kOpStore).empty());

  // One layout type: 2 dimensions, clamp mode Constant (reads outside give 0, writes are dropped).
  auto layout_types = instructions(words, tensor::kOpTypeTensorLayout);
  REQUIRE(layout_types.size() == 1);
  const uint32_t layout = layout_types[0][0];
  CHECK(constant_value(words, layout_types[0][1]) == 2);
  CHECK(constant_value(words, layout_types[0][2]) == tensor::kClampConstant);

  // Per statement: create -> set dimension (rows, cols) -> set stride (stride, 1) -> slice (row0,
  // matrix rows, col0, matrix cols), each made from the one before.
  auto slices = instructions(words, tensor::kOpTensorLayoutSlice);
  REQUIRE(slices.size() == 3);
  CHECK(instructions(words, tensor::kOpCreateTensorLayout).size() == 3);
  std::multiset<std::pair<uint32_t, uint32_t>> spans;
  std::multiset<uint32_t> strides;
  for (const auto& slice : slices) {
    REQUIRE(slice.size() == 7);
    CHECK(slice[0] == layout);
    spans.insert({constant_value(words, slice[4]), constant_value(words, slice[6])});
    std::vector<uint32_t> stride = defining(words, tensor::kOpTensorLayoutSetStride, slice[2]);
    REQUIRE(stride.size() == 5);
    CHECK(constant_value(words, stride[4]) == 1);
    std::vector<uint32_t> pitch = defining(words, spv::Op::OpBitcast, stride[3]);  // the IR's i32 as u32
    REQUIRE(pitch.size() == 3);
    strides.insert(constant_value(words, pitch[2]));
    std::vector<uint32_t> dimension = defining(words, tensor::kOpTensorLayoutSetDimension, stride[2]);
    REQUIRE(dimension.size() == 5);
    CHECK(!defining(words, tensor::kOpCreateTensorLayout, dimension[2]).empty());
  }
  CHECK(spans == std::multiset<std::pair<uint32_t, uint32_t>>{{128, 64}, {64, 256}, {128, 256}});
  CHECK(strides == std::multiset<uint32_t>{136, 264, 264});
  auto is_slice = [&](uint32_t id) { return !defining(words, tensor::kOpTensorLayoutSlice, id).empty(); };

  // Loads: pointer to element 0 of the buffer, a zero matrix of the result type as the Object,
  // the layout, NonPrivatePointer, no tensor addressing operands.
  const uint32_t f16 = float_type(words, 16);
  auto loads = instructions(words, tensor::kOpLoadTensor);
  REQUIRE(loads.size() == 2);
  for (const auto& l : loads) {
    REQUIRE(l.size() == 7);
    CHECK(storage_buffer_element(words, l[2], f16));
    std::vector<uint32_t> chain = defining(words, spv::Op::OpAccessChain, l[2]);
    CHECK(constant_value(words, chain.back()) == 0);
    std::vector<uint32_t> zero = defining(words, spv::Op::OpCompositeConstruct, l[3]);
    REQUIRE(zero.size() == 3);
    CHECK(zero[0] == l[0]);
    CHECK(is_slice(l[4]));
    CHECK(l[5] == kNonPrivate);
    CHECK(l[6] == tensor::kOperandsNone);
  }
  // The store: the accumulator converted to f16 first.
  auto stores = instructions(words, tensor::kOpStoreTensor);
  REQUIRE(stores.size() == 1);
  REQUIRE(stores[0].size() == 5);
  CHECK(storage_buffer_element(words, stores[0][0], f16));
  CHECK(!defining(words, spv::Op::OpFConvert, stores[0][1]).empty());
  CHECK(is_slice(stores[0][2]));
  CHECK(stores[0][3] == kNonPrivate);
  CHECK(stores[0][4] == tensor::kOperandsNone);
}

TEST_CASE("bf16 workgroup matrices read and write global arrays of 16-bit words") {
  SpirvOptions o = with_workgroup_matrices();
  o.bfloat16_cooperative_matrix = true;
  for (bool tensor_windows : {false, true}) {
    CAPTURE(tensor_windows);
    WorkgroupGemm g;
    g.operands = g.output = DType::kBF16;
    g.tensor = tensor_windows;
    std::vector<uint32_t> words = emit_valid(workgroup_gemm_function(g), o);
    CHECK(has_extension(words, spirv::bfloat16::kExtension));
    CHECK(has_capability(words, spirv::bfloat16::kCapabilityType));
    CHECK(has_capability(words, spirv::bfloat16::kCapabilityCooperativeMatrix));
    const uint32_t bf16 = float_type(words, 16, true), f32 = float_type(words, 32);
    REQUIRE(bf16 != 0);
    CHECK(float_type(words, 16) == 0);  // no IEEE f16 anywhere
    std::set<MatrixType> seen;
    for (const auto& [id, t] : matrix_types(words)) seen.insert(t);
    CHECK(seen == std::set<MatrixType>{{bf16, kWorkgroupScope, 128, 64, coop::kUseMatrixA},
                                       {bf16, kWorkgroupScope, 64, 256, coop::kUseMatrixB},
                                       {f32, kWorkgroupScope, 128, 256, coop::kUseAccumulator},
                                       {bf16, kWorkgroupScope, 128, 256, coop::kUseAccumulator}});
    // The pointers point at u16 words; the stride counts them, one per element.
    uint32_t u16 = 0;
    for (const auto& t : instructions(words, spv::Op::OpTypeInt))
      if (t[1] == 16 && t[2] == 0) u16 = t[0];
    REQUIRE(u16 != 0);
    auto loads = instructions(words, tensor_windows ? tensor::kOpLoadTensor : coop::kOpLoad);
    auto stores = instructions(words, tensor_windows ? tensor::kOpStoreTensor : coop::kOpStore);
    REQUIRE(loads.size() == 2);
    REQUIRE(stores.size() == 1);
    for (const auto& l : loads) CHECK(storage_buffer_element(words, l[2], u16));
    CHECK(storage_buffer_element(words, stores[0][0], u16));
    std::vector<uint32_t> convert = defining(words, spv::Op::OpFConvert, stores[0][1]);
    REQUIRE(convert.size() == 3);
    CHECK(std::get<0>(matrix_types(words).at(convert[0])) == bf16);
  }

  // bf16 matrices, or a bf16 result, need SpirvOptions::bfloat16_cooperative_matrix.
  WorkgroupGemm g;
  g.operands = DType::kBF16;
  absl::Status s = emit_error(workgroup_gemm_function(g), with_workgroup_matrices());
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "matrix ma: bf16 cooperative matrices need"));
  g.operands = DType::kF16;
  g.output = DType::kBF16;
  s = emit_error(workgroup_gemm_function(g), with_workgroup_matrices());
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "matrix_store of matrix acc (f32) through global array c of bf16: converting to bf16 needs"));
}

TEST_CASE("workgroup matrices and tensor windows are refused without the options, naming what is missing") {
  WorkgroupGemm g;
  simt::Function plain = workgroup_gemm_function(g);
  g.tensor = true;
  simt::Function windows = workgroup_gemm_function(g);

  SpirvOptions o = with_workgroup_matrices();
  o.workgroup_matrices = false;
  absl::Status s = emit_error(plain, o);
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "kernel workgroup_gemm: matrix ma has workgroup scope"));
  CHECK(contains(s, "SpirvOptions::workgroup_matrices"));

  o = with_workgroup_matrices();
  o.spirv_version = 0x00010500;
  s = emit_error(plain, o);
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "needs SPIR-V 1.6"));
  CHECK(contains(s, "the options ask for SPIR-V 1.5"));

  o = with_workgroup_matrices();
  o.tensor_addressing = false;
  CHECK(emit_error(plain, o).ok());
  s = emit_error(windows, o);
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "kernel workgroup_gemm: matrix_tensor_load: tensor-addressed"));
  CHECK(contains(s, "SpirvOptions::tensor_addressing"));

  // Global f16 arrays without 16-bit storage access are u32 words two elements each.
  o = with_workgroup_matrices();
  o.storage_16bit = false;
  for (const simt::Function* f : {&plain, &windows}) {
    s = emit_error(*f, o);
    CHECK(absl::IsUnimplemented(s));
    CHECK(contains(s, "through global array a of f16: its elements are packed into 32-bit words"));
  }
}

TEST_CASE("malformed workgroup-matrix statements are InvalidArgument naming the statement") {
  const SpirvOptions o = with_workgroup_matrices();
  WorkgroupGemm g;
  g.tensor = true;
  simt::Function f = workgroup_gemm_function(g);
  simt::Stmt& first = f.body[1].body[0];  // the window of A
  first.operands.resize(2);
  absl::Status s = emit_error(f, o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_tensor_load has 2 operands, expected 5"));

  f = workgroup_gemm_function(g);
  f.shared = {{"a_sh", DType::kF16, 128 * 64}};
  f.body[1].body[0].space = simt::Space::kShared;
  s = emit_error(f, o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "through shared array a_sh of f16: tensor-addressed matrix statements address global arrays"));

  // Subgroup-scope matrices: no tensor windows, no mixing with workgroup ones, and no converted
  // stores (SpirvOptions promises no 16x16 f16 accumulator shape).
  f = workgroup_gemm_function(g);
  for (simt::MatrixVariable& m : f.matrices) m.rows = m.cols = 16;
  f.matrices[0].scope = simt::MatrixScope::kSubgroup;
  s = emit_error(f, o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_tensor_load: matrix ma has subgroup scope"));
  g.tensor = false;
  f = workgroup_gemm_function(g);
  for (simt::MatrixVariable& m : f.matrices) m.rows = m.cols = 16;
  f.matrices[0].scope = simt::MatrixScope::kSubgroup;
  s = emit_error(f, o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix_mul_add: acc, ma and mb are not all of one scope"));

  simt::Function subgroup = matrix_product_function(32);
  subgroup.params[2].type = DType::kF16;
  simt::Stmt& store = subgroup.body[7];
  REQUIRE(store.kind == simt::StmtKind::kMatrixStore);
  store.space = simt::Space::kGlobal;
  store.array = 2;
  s = emit_error(subgroup, o);
  CHECK(absl::IsUnimplemented(s));
  CHECK(contains(s, "through global array c of f16: converting needs a 16x16 f16 accumulator shape"));

  f = workgroup_gemm_function(g);
  f.matrices[2].rows = 0;
  s = emit_error(f, o);
  CHECK(absl::IsInvalidArgument(s));
  CHECK(contains(s, "matrix acc is 0x256"));
}

}  // namespace
}  // namespace tilert::vulkan
