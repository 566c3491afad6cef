// The instruction table (SPIR-V specification, section 3.49 "Instructions") and the decoder that
// finds the ids in an instruction's words.
#include "backends/vulkan/spirv/instructions.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "ir/status.h"

namespace tilert::spirv {
namespace {

// X(opcode, result form, operand kinds, terminates the block)
#define TILERT_SPIRV_INSTRUCTIONS(X)                     \
  /* Module layout */                                    \
  X(OpCapability, kNone, "L", false)                     \
  X(OpExtension, kNone, "S", false)                      \
  X(OpExtInstImport, kResult, "S", false)                \
  X(OpMemoryModel, kNone, "LL", false)                   \
  X(OpEntryPoint, kNone, "LISI*", false)                 \
  X(OpExecutionMode, kNone, "ILL*", false)               \
  X(OpName, kNone, "IS", false)                          \
  X(OpMemberName, kNone, "ILS", false)                   \
  X(OpDecorate, kNone, "ILL*", false)                    \
  X(OpMemberDecorate, kNone, "ILLL*", false)             \
  /* Types */                                            \
  X(OpTypeVoid, kResult, "", false)                      \
  X(OpTypeBool, kResult, "", false)                      \
  X(OpTypeInt, kResult, "LL", false)                     \
  X(OpTypeFloat, kResult, "LL?", false)                  \
  X(OpTypeVector, kResult, "IL", false)                  \
  X(OpTypeArray, kResult, "II", false)                   \
  X(OpTypeRuntimeArray, kResult, "I", false)             \
  X(OpTypeStruct, kResult, "I*", false)                  \
  X(OpTypePointer, kResult, "LI", false)                 \
  X(OpTypeFunction, kResult, "II*", false)               \
  /* Constants and variables */                          \
  X(OpConstant, kTypedResult, "LL*", false)              \
  X(OpConstantTrue, kTypedResult, "", false)             \
  X(OpConstantFalse, kTypedResult, "", false)            \
  X(OpConstantComposite, kTypedResult, "I*", false)      \
  X(OpSpecConstant, kTypedResult, "LL*", false)          \
  X(OpVariable, kTypedResult, "LI?", false)              \
  /* Functions and control flow */                       \
  X(OpFunction, kTypedResult, "LI", false)               \
  X(OpFunctionParameter, kTypedResult, "", false)        \
  X(OpFunctionEnd, kNone, "", false)                     \
  X(OpFunctionCall, kTypedResult, "II*", false)          \
  X(OpLabel, kResult, "", false)                         \
  X(OpPhi, kTypedResult, "I*", false)                    \
  X(OpSelectionMerge, kNone, "IL", false)                \
  X(OpLoopMerge, kNone, "IIL*", false)                   \
  X(OpBranch, kNone, "I", true)                          \
  X(OpBranchConditional, kNone, "IIIL*", true)           \
  X(OpReturn, kNone, "", true)                           \
  X(OpReturnValue, kNone, "I", true)                     \
  X(OpUnreachable, kNone, "", true)                      \
  /* Memory */                                           \
  X(OpLoad, kTypedResult, "IL*", false)                  \
  X(OpStore, kNone, "IIL*", false)                       \
  X(OpAccessChain, kTypedResult, "II*", false)           \
  /* Composites */                                       \
  X(OpCompositeExtract, kTypedResult, "IL*", false)      \
  X(OpCompositeConstruct, kTypedResult, "I*", false)     \
  /* Arithmetic, bits, comparisons, conversions */       \
  X(OpIAdd, kTypedResult, "II", false)                   \
  X(OpISub, kTypedResult, "II", false)                   \
  X(OpIMul, kTypedResult, "II", false)                   \
  X(OpUDiv, kTypedResult, "II", false)                   \
  X(OpUMod, kTypedResult, "II", false)                   \
  X(OpFAdd, kTypedResult, "II", false)                   \
  X(OpFSub, kTypedResult, "II", false)                   \
  X(OpFMul, kTypedResult, "II", false)                   \
  X(OpFDiv, kTypedResult, "II", false)                   \
  X(OpFRem, kTypedResult, "II", false)                   \
  X(OpFNegate, kTypedResult, "I", false)                 \
  X(OpSNegate, kTypedResult, "I", false)                 \
  X(OpSDiv, kTypedResult, "II", false)                   \
  X(OpSRem, kTypedResult, "II", false)                   \
  X(OpNot, kTypedResult, "I", false)                     \
  X(OpShiftRightArithmetic, kTypedResult, "II", false)   \
  X(OpBitwiseOr, kTypedResult, "II", false)              \
  X(OpBitwiseXor, kTypedResult, "II", false)             \
  X(OpULessThanEqual, kTypedResult, "II", false)         \
  X(OpUGreaterThanEqual, kTypedResult, "II", false)      \
  X(OpSLessThanEqual, kTypedResult, "II", false)         \
  X(OpSGreaterThan, kTypedResult, "II", false)           \
  X(OpSGreaterThanEqual, kTypedResult, "II", false)      \
  X(OpFOrdEqual, kTypedResult, "II", false)              \
  X(OpFUnordNotEqual, kTypedResult, "II", false)         \
  X(OpFOrdLessThanEqual, kTypedResult, "II", false)      \
  X(OpFOrdGreaterThan, kTypedResult, "II", false)        \
  X(OpFOrdGreaterThanEqual, kTypedResult, "II", false)   \
  X(OpLogicalOr, kTypedResult, "II", false)              \
  X(OpLogicalNot, kTypedResult, "I", false)              \
  X(OpLogicalEqual, kTypedResult, "II", false)           \
  X(OpLogicalNotEqual, kTypedResult, "II", false)        \
  X(OpSConvert, kTypedResult, "I", false)                \
  X(OpUConvert, kTypedResult, "I", false)                \
  X(OpShiftRightLogical, kTypedResult, "II", false)      \
  X(OpShiftLeftLogical, kTypedResult, "II", false)       \
  X(OpBitwiseAnd, kTypedResult, "II", false)             \
  X(OpIEqual, kTypedResult, "II", false)                 \
  X(OpINotEqual, kTypedResult, "II", false)              \
  X(OpULessThan, kTypedResult, "II", false)              \
  X(OpUGreaterThan, kTypedResult, "II", false)           \
  X(OpSLessThan, kTypedResult, "II", false)              \
  X(OpFOrdLessThan, kTypedResult, "II", false)           \
  X(OpLogicalAnd, kTypedResult, "II", false)             \
  X(OpSelect, kTypedResult, "III", false)                \
  X(OpConvertUToF, kTypedResult, "I", false)             \
  X(OpConvertSToF, kTypedResult, "I", false)             \
  X(OpConvertFToU, kTypedResult, "I", false)             \
  X(OpConvertFToS, kTypedResult, "I", false)             \
  X(OpFConvert, kTypedResult, "I", false)                \
  X(OpBitcast, kTypedResult, "I", false)                 \
  X(OpExtInst, kTypedResult, "ILI*", false)              \
  /* Synchronization and subgroups */                    \
  X(OpControlBarrier, kNone, "III", false)               \
  X(OpMemoryBarrier, kNone, "II", false)                 \
  X(OpGroupNonUniformElect, kTypedResult, "I", false)    \
  X(OpGroupNonUniformBroadcastFirst, kTypedResult, "II", false) \
  X(OpGroupNonUniformShuffle, kTypedResult, "III", false) \
  X(OpGroupNonUniformIAdd, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformFAdd, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformFMin, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformFMax, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformIMul, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformFMul, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformSMin, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformUMin, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformSMax, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformUMax, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformLogicalAnd, kTypedResult, "ILII?", false) \
  X(OpGroupNonUniformLogicalOr, kTypedResult, "ILII?", false) \
  X(OpReadClockKHR, kTypedResult, "I", false)            \
  /* Atomics (scope and semantics are constant ids) */   \
  X(OpAtomicLoad, kTypedResult, "III", false)            \
  X(OpAtomicIAdd, kTypedResult, "IIII", false)           \
  X(OpAtomicFAddEXT, kTypedResult, "IIII", false)        \
  X(OpAtomicAnd, kTypedResult, "IIII", false)            \
  X(OpAtomicOr, kTypedResult, "IIII", false)             \
  X(OpAtomicCompareExchange, kTypedResult, "IIIIII", false)

// Instructions of extensions newer than the installed SPIR-V headers, with their opcodes from
// this project's own headers (cooperative_matrix.h, tensor_addressing.h).
// X(name, opcode, result form, operand kinds, terminates the block)
#define TILERT_SPIRV_INSTRUCTIONS_BY_VALUE(X)                                                        \
  /* SPV_KHR_cooperative_matrix: scope, rows, columns, use */                                        \
  X(OpTypeCooperativeMatrixKHR, cooperative_matrix::kOpTypeCooperativeMatrix, kResult, "IIIII", false) \
  /* pointer, layout, [stride, [memory operands]] */                                                 \
  X(OpCooperativeMatrixLoadKHR, cooperative_matrix::kOpLoad, kTypedResult, "III?L*", false)          \
  /* pointer, object, layout, [stride, [memory operands]] */                                         \
  X(OpCooperativeMatrixStoreKHR, cooperative_matrix::kOpStore, kNone, "IIII?L*", false)              \
  /* a, b, c, [cooperative matrix operands] */                                                       \
  X(OpCooperativeMatrixMulAddKHR, cooperative_matrix::kOpMulAdd, kTypedResult, "IIIL?", false)       \
  X(OpCooperativeMatrixLengthKHR, cooperative_matrix::kOpLength, kTypedResult, "I", false)          \
  /* SPV_NV_tensor_addressing: dimensions, clamp mode */                                            \
  X(OpTypeTensorLayoutNV, tensor_addressing::kOpTypeTensorLayout, kResult, "II", false)              \
  X(OpCreateTensorLayoutNV, tensor_addressing::kOpCreateTensorLayout, kTypedResult, "", false)       \
  /* layout, one value per dimension */                                                             \
  X(OpTensorLayoutSetDimensionNV, tensor_addressing::kOpTensorLayoutSetDimension, kTypedResult, "II*", false) \
  X(OpTensorLayoutSetStrideNV, tensor_addressing::kOpTensorLayoutSetStride, kTypedResult, "II*", false) \
  /* layout, (offset, span) per dimension */                                                        \
  X(OpTensorLayoutSliceNV, tensor_addressing::kOpTensorLayoutSlice, kTypedResult, "II*", false)      \
  /* SPV_NV_cooperative_matrix2: pointer, object, layout, memory operand, addressing operands */     \
  X(OpCooperativeMatrixLoadTensorNV, tensor_addressing::kOpLoadTensor, kTypedResult, "IIILL", false) \
  X(OpCooperativeMatrixStoreTensorNV, tensor_addressing::kOpStoreTensor, kNone, "IIILL", false)

constexpr InstructionInfo kInstructions[] = {
#define TILERT_X(op, form, operands, terminates) \
  {spv::Op::op, #op, ResultForm::form, operands, terminates},
    TILERT_SPIRV_INSTRUCTIONS(TILERT_X)
#undef TILERT_X
#define TILERT_X(name, value, form, operands, terminates) \
  {value, #name, ResultForm::form, operands, terminates},
    TILERT_SPIRV_INSTRUCTIONS_BY_VALUE(TILERT_X)
#undef TILERT_X
};

// Words a literal string starting at words[0] occupies, or 0 when no nul ends it.
size_t string_word_count(std::span<const uint32_t> words) {
  for (size_t i = 0; i < words.size(); ++i) {
    if ((words[i] >> 24) == 0 || ((words[i] >> 16) & 0xff) == 0 || ((words[i] >> 8) & 0xff) == 0 ||
        (words[i] & 0xff) == 0) {
      return i + 1;
    }
  }
  return 0;
}

}  // namespace

const InstructionInfo* instruction_info(spv::Op op) {
  // Asked for every instruction the builder makes and checks: an index over the table (the first
  // row of an opcode, as a scan would find), built once.
  static const auto* const by_op = [] {
    auto* index = new absl::flat_hash_map<uint32_t, const InstructionInfo*>();
    for (const InstructionInfo& info : kInstructions) index->emplace(static_cast<uint32_t>(info.op), &info);
    return index;
  }();
  auto it = by_op->find(static_cast<uint32_t>(op));
  return it == by_op->end() ? nullptr : it->second;
}

absl::StatusOr<OperandIds> decode_ids(const InstructionInfo& info,
                                      std::span<const uint32_t> words) {
  OperandIds ids;
  ids.used.reserve(words.size());  // at most one id a word: one allocation, not one per doubling
  size_t at = 0;
  auto missing = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(av(info.name), ": missing ", av(what),
                                                   " (operand word ", at, ")"));
  };
  if (info.result == ResultForm::kTypedResult) {
    if (words.size() < 2) return missing("result type and result id");
    ids.result_type = words[0];
    ids.used.push_back(words[0]);
    ids.result = words[1];
    at = 2;
  } else if (info.result == ResultForm::kResult) {
    if (words.empty()) return missing("result id");
    ids.result = words[0];
    at = 1;
  }
  std::string_view kinds = info.operands;
  for (size_t k = 0; k < kinds.size(); ++k) {
    char kind = kinds[k];
    char repeat = k + 1 < kinds.size() ? kinds[k + 1] : '\0';
    bool many = repeat == '*';
    bool optional = repeat == '?';
    if (many || optional) ++k;
    int count = 0;
    while (at < words.size() && (count == 0 || many)) {
      if (kind == 'I') {
        ids.used.push_back(words[at]);
        ++at;
      } else if (kind == 'L') {
        ++at;
      } else {
        size_t n = string_word_count(words.subspan(at));
        if (n == 0) return missing("the nul ending a literal string");
        at += n;
      }
      ++count;
    }
    if (count == 0 && !many && !optional) {
      return missing(kind == 'I' ? "an id" : kind == 'L' ? "a literal" : "a literal string");
    }
  }
  if (at != words.size()) {
    return absl::InvalidArgumentError(absl::StrCat(av(info.name), ": ", words.size() - at,
                                                   " operand words more than the instruction takes"));
  }
  return ids;
}

void append_string(std::vector<uint32_t>& words, std::string_view text) {
  size_t word_count = text.size() / 4 + 1;  // the nul always fits: at least one padding byte
  size_t first = words.size();
  words.resize(first + word_count, 0);
  for (size_t i = 0; i < text.size(); ++i) {
    words[first + i / 4] |= static_cast<uint32_t>(static_cast<unsigned char>(text[i])) << (8 * (i % 4));
  }
}

}  // namespace tilert::spirv
