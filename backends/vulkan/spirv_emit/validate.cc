// See validate.h.
#include "backends/vulkan/spirv_emit/validate.h"

#include "absl/strings/str_cat.h"
#include "ir/status.h"

#ifdef TILERT_VALIDATE_SPIRV
#include <spirv-tools/libspirv.h>
#endif

namespace tilert::vulkan {

#ifdef TILERT_VALIDATE_SPIRV

bool validates_emitted_spirv() { return true; }

absl::Status validate_emitted_spirv(std::string_view kernel_name, std::span<const uint32_t> words,
                                    uint32_t spirv_version) {
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

absl::Status validate_emitted_spirv(std::string_view, std::span<const uint32_t>, uint32_t) {
  return absl::OkStatus();
}

#endif

}  // namespace tilert::vulkan
