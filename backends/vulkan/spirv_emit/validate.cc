// See validate.h.
#include "backends/vulkan/spirv_emit/validate.h"

#ifdef TILERT_VALIDATE_SPIRV
#include <spirv-tools/libspirv.h>

#include <cstring>
#include <string>
#endif

#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "ir/status.h"

namespace tilert::vulkan {

#ifdef TILERT_VALIDATE_SPIRV

namespace {

// Calls `visit(op, operands)` for each of the module's leading OpCapability and OpExtension
// instructions (they come first, in that order) and stops at the first other one.
template <typename Visit>
void visit_preamble(std::span<const uint32_t> words, Visit visit) {
  constexpr size_t kHeaderWords = 5;
  for (size_t at = kHeaderWords; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    const auto op = static_cast<spv::Op>(words[at] & 0xffff);
    if (count == 0 || at + count > words.size()) return;
    if (op != spv::Op::OpCapability && op != spv::Op::OpExtension) return;
    visit(op, words.subspan(at + 1, count - 1));
    at += count;
  }
}

bool declares_capability(std::span<const uint32_t> words, spv::Capability capability) {
  bool found = false;
  visit_preamble(words, [&](spv::Op op, std::span<const uint32_t> operands) {
    found |= op == spv::Op::OpCapability && !operands.empty() && operands[0] == static_cast<uint32_t>(capability);
  });
  return found;
}

bool declares_extension(std::span<const uint32_t> words, std::string_view name) {
  bool found = false;
  visit_preamble(words, [&](spv::Op op, std::span<const uint32_t> operands) {
    if (op != spv::Op::OpExtension) return;
    std::string text(operands.size() * 4, '\0');
    std::memcpy(text.data(), operands.data(), text.size());
    found |= std::string_view(text.c_str()) == name;
  });
  return found;
}

// Asks the assembler: a SPIRV-Tools without an extension does not know its capabilities' names.
bool assembles(const char* text) {
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
  spv_binary binary = nullptr;
  spv_diagnostic diagnostic = nullptr;
  bool ok = spvTextToBinary(context, text, std::strlen(text), &binary, &diagnostic) == SPV_SUCCESS;
  spvBinaryDestroy(binary);
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return ok;
}

}  // namespace

bool validates_emitted_spirv() { return true; }

bool validates_cooperative_matrix() {
  static const bool known = assembles("OpCapability CooperativeMatrixKHR\n");
  return known;
}

bool validates_bfloat16() {
  static const bool known = assembles("OpCapability BFloat16TypeKHR\n");
  return known;
}

bool validates_workgroup_matrices() {  // a capability SPV_NV_cooperative_matrix2 defines
  static const bool known = assembles("OpCapability CooperativeMatrixTensorAddressingNV\n");
  return known;
}

bool validates_tensor_addressing() {
  static const bool known = assembles("OpCapability TensorAddressingNV\n");
  return known;
}

absl::Status validate_emitted_spirv(std::string_view kernel_name, std::span<const uint32_t> words,
                                    uint32_t spirv_version) {
  // A validator that predates an extension rejects every module using it (it cannot even parse
  // the extension's capabilities), so such modules are left to the driver. Workgroup scope has
  // no capability of its own: its modules are known by SPV_NV_cooperative_matrix2's OpExtension.
  if ((!validates_cooperative_matrix() && declares_capability(words, spirv::cooperative_matrix::kCapability)) ||
      (!validates_bfloat16() && declares_capability(words, spirv::bfloat16::kCapabilityType)) ||
      (!validates_workgroup_matrices() && declares_extension(words, spirv::tensor_addressing::kMatrixExtension)) ||
      (!validates_tensor_addressing() &&
       declares_capability(words, spirv::tensor_addressing::kCapabilityTensorAddressing))) {
    return absl::OkStatus();
  }
  spv_target_env env = spirv_version >= 0x00010600 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2;
  spv_context context = spvContextCreate(env);
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  spv_result_t result = spvValidate(context, &binary, &diagnostic);
  absl::Status status;
  if (result != SPV_SUCCESS) {
    status = absl::InternalError(
        absl::StrCat("kernel ", av(kernel_name), ": emitted SPIR-V is invalid: ",
                     diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error
                                                                          : "no message"));
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return status;
}

#else

bool validates_emitted_spirv() { return false; }
bool validates_cooperative_matrix() { return false; }
bool validates_bfloat16() { return false; }
bool validates_workgroup_matrices() { return false; }
bool validates_tensor_addressing() { return false; }

absl::Status validate_emitted_spirv(std::string_view, std::span<const uint32_t>, uint32_t) {
  return absl::OkStatus();
}

#endif

}  // namespace tilert::vulkan
