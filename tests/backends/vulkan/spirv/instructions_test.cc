#include "backends/vulkan/spirv/instructions.h"

#include <doctest/doctest.h>

#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/module_builder.h"
#include "backends/vulkan/spirv/tensor_addressing.h"

#include <string>

namespace tilert::spirv {
namespace {

TEST_CASE("spirv instructions: literal strings are nul-terminated and word-padded") {
  std::vector<uint32_t> words;
  append_string(words, "abc");
  CHECK(words == std::vector<uint32_t>{0x00636261});
  words.clear();
  append_string(words, "main");  // four bytes need a whole word for the nul
  CHECK(words == std::vector<uint32_t>{0x6e69616d, 0});
  words.clear();
  append_string(words, "");
  CHECK(words == std::vector<uint32_t>{0});
}

TEST_CASE("spirv instructions: the table knows result forms and terminators") {
  const InstructionInfo* fadd = instruction_info(spv::Op::OpFAdd);
  REQUIRE(fadd != nullptr);
  CHECK(fadd->name == "OpFAdd");
  CHECK(fadd->result == ResultForm::kTypedResult);
  CHECK_FALSE(fadd->terminates_block);
  CHECK(instruction_info(spv::Op::OpReturn)->terminates_block);
  CHECK(instruction_info(spv::Op::OpBranchConditional)->terminates_block);
  CHECK(instruction_info(spv::Op::OpTypeInt)->result == ResultForm::kResult);
  CHECK(instruction_info(spv::Op::OpImageSampleImplicitLod) == nullptr);
  CHECK(instruction_header(spv::Op::OpFAdd, 5) == ((5u << 16) | 129u));
}

TEST_CASE("spirv instructions: decode_ids finds every id and checks the operand shape") {
  // OpEntryPoint GLCompute %4 "main" %7 %8
  std::vector<uint32_t> entry = {5, 4};
  append_string(entry, "main");
  entry.push_back(7);
  entry.push_back(8);
  absl::StatusOr<OperandIds> ids = decode_ids(*instruction_info(spv::Op::OpEntryPoint), entry);
  REQUIRE(ids.ok());
  CHECK(ids->used == std::vector<Id>{4, 7, 8});
  CHECK(ids->result == 0);

  // OpGroupNonUniformFAdd %float %10 %scope Reduce %value [%cluster]
  const InstructionInfo& fadd = *instruction_info(spv::Op::OpGroupNonUniformFAdd);
  ids = decode_ids(fadd, std::vector<uint32_t>{2, 10, 3, 0, 9});
  REQUIRE(ids.ok());
  CHECK(ids->result_type == 2);
  CHECK(ids->result == 10);
  CHECK(ids->used == std::vector<Id>{2, 3, 9});
  CHECK(decode_ids(fadd, std::vector<uint32_t>{2, 10, 3, 3, 9, 11}).ok());
  absl::StatusOr<OperandIds> extra = decode_ids(fadd, std::vector<uint32_t>{2, 10, 3, 3, 9, 11, 12});
  REQUIRE(!extra.ok());
  CHECK(std::string(extra.status().message()) ==
        "OpGroupNonUniformFAdd: 1 operand words more than the instruction takes");
  absl::StatusOr<OperandIds> short_add =
      decode_ids(*instruction_info(spv::Op::OpIAdd), std::vector<uint32_t>{2, 10, 3});
  REQUIRE(!short_add.ok());
  CHECK(std::string(short_add.status().message()) == "OpIAdd: missing an id (operand word 3)");
  absl::StatusOr<OperandIds> unterminated =
      decode_ids(*instruction_info(spv::Op::OpExtension), std::vector<uint32_t>{0x41414141});
  REQUIRE(!unterminated.ok());
  CHECK(std::string(unterminated.status().message()).find("nul") != std::string::npos);
}

TEST_CASE("spirv instructions: cooperative-matrix rows take their optional stride and operands") {
  namespace coop = cooperative_matrix;
  const InstructionInfo* type = instruction_info(coop::kOpTypeCooperativeMatrix);
  REQUIRE(type != nullptr);
  CHECK(type->name == "OpTypeCooperativeMatrixKHR");
  CHECK(type->result == ResultForm::kResult);
  CHECK(instruction_header(coop::kOpMulAdd, 6) == ((6u << 16) | 4459u));

  // %r = OpCooperativeMatrixLoadKHR %type %pointer %layout [%stride [NonPrivatePointer]]
  const InstructionInfo& load = *instruction_info(coop::kOpLoad);
  absl::StatusOr<OperandIds> ids = decode_ids(load, std::vector<uint32_t>{2, 10, 3, 4});
  REQUIRE(ids.ok());
  CHECK(ids->used == std::vector<Id>{2, 3, 4});
  ids = decode_ids(load, std::vector<uint32_t>{2, 10, 3, 4, 5, 0x20});
  REQUIRE(ids.ok());
  CHECK(ids->used == std::vector<Id>{2, 3, 4, 5});
  CHECK_FALSE(decode_ids(load, std::vector<uint32_t>{2, 10, 3}).ok());

  // OpCooperativeMatrixStoreKHR %pointer %object %layout [%stride [...]]: no result.
  const InstructionInfo& store = *instruction_info(coop::kOpStore);
  CHECK(store.result == ResultForm::kNone);
  ids = decode_ids(store, std::vector<uint32_t>{3, 7, 4, 5});
  REQUIRE(ids.ok());
  CHECK(ids->used == std::vector<Id>{3, 7, 4, 5});
  CHECK(ids->result == 0);
}

TEST_CASE("spirv instructions: tensor-layout rows (SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix2)") {
  namespace tensor = tensor_addressing;
  // %layout = OpTypeTensorLayoutNV %dimensions %clamp_mode: both by id.
  const InstructionInfo& type = *instruction_info(tensor::kOpTypeTensorLayout);
  CHECK(type.name == "OpTypeTensorLayoutNV");
  CHECK(type.result == ResultForm::kResult);
  CHECK(instruction_header(tensor::kOpTypeTensorLayout, 4) == ((4u << 16) | 5370u));
  // %r = OpTensorLayoutSliceNV %type %layout (%offset %span)*: every operand an id.
  const InstructionInfo& slice = *instruction_info(tensor::kOpTensorLayoutSlice);
  absl::StatusOr<OperandIds> ids = decode_ids(slice, std::vector<uint32_t>{2, 10, 3, 4, 5, 6, 7});
  REQUIRE(ids.ok());
  CHECK(ids->used == std::vector<Id>{2, 3, 4, 5, 6, 7});
  // %r = OpCooperativeMatrixLoadTensorNV %type %pointer %object %layout MemoryAccess Addressing:
  // the two masks are literals.
  const InstructionInfo& load = *instruction_info(tensor::kOpLoadTensor);
  ids = decode_ids(load, std::vector<uint32_t>{2, 10, 3, 4, 5, 0, 0});
  REQUIRE(ids.ok());
  CHECK(ids->used == std::vector<Id>{2, 3, 4, 5});
  CHECK_FALSE(decode_ids(load, std::vector<uint32_t>{2, 10, 3, 4, 5}).ok());
  const InstructionInfo& store = *instruction_info(tensor::kOpStoreTensor);
  CHECK(store.result == ResultForm::kNone);
  CHECK(instruction_info(tensor::kOpCreateTensorLayout)->operands.empty());

  // The builder's layout type takes its dimensions and clamp mode as u32 constants, once.
  ModuleBuilder b(kSpirvVersion1_6);
  const Id layout = b.type_tensor_layout(2, tensor::kClampConstant);
  CHECK(layout != 0);
  CHECK(b.type_tensor_layout(2, tensor::kClampConstant) == layout);
  CHECK(b.type_tensor_layout(3, tensor::kClampConstant) != layout);
  CHECK(b.status().ok());
}

}  // namespace
}  // namespace tilert::spirv
