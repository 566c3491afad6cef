#include "backends/cuda/code_version.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "code_fingerprint.h"  // generated in the build directory by code_fingerprint.py

namespace tilert::cuda {

std::string_view generated_code_version() {
  static const std::string* version =
      new std::string(absl::StrCat(kGeneratedCodeVersion, "+", TILERT_CUDA_CODE_FINGERPRINT));
  return *version;
}

}  // namespace tilert::cuda
