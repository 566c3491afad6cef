// See validate.h.
#include "backends/vulkan/spirv_emit/validate.h"

#ifdef TILERT_VALIDATE_SPIRV
#include <spirv-tools/libspirv.h>

#include <cstring>
#endif

#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv/bfloat16.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "ir/status.h"

namespace tilert::vulkan {

#ifdef TILERT_VALIDATE_SPIRV

namespace {

// Whether `words` (a module) has an OpCapability `capability` among its first instructions.
bool declares_capability(std::span<const uint32_t> words, spv::Capability capability) {
  constexpr size_t kHeaderWords = 5;
  for (size_t at = kHeaderWords; at < words.size();) {
    uint32_t count = words[at] >> 16;
    auto op = static_cast<spv::Op>(words[at] & 0xffff);
    if (count == 0 || op != spv::Op::OpCapability) return false;  // capabilities come first
    if (at + 1 < words.size() && words[at + 1] == static_cast<uint32_t>(capability)) return true;
    at += count;
  }
  return false;
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

absl::Status validate_emitted_spirv(std::string_view kernel_name, std::span<const uint32_t> words,
                                    uint32_t spirv_version) {
  if ((!validates_cooperative_matrix() && declares_capability(words, spirv::cooperative_matrix::kCapability)) ||
      (!validates_bfloat16() && declares_capability(words, spirv::bfloat16::kCapabilityType))) {
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

absl::Status validate_emitted_spirv(std::string_view, std::span<const uint32_t>, uint32_t) {
  return absl::OkStatus();
}

#endif

}  // namespace tilert::vulkan
