// `# conformance:` comment lines of a .tile file, which tell the conformance harness what to run:
//   # conformance: M=100, N=77      one more size set (scalar parameter values)
//   # conformance: skip <reason>    the kernel is not run; the reason is reported
// Where a line sits says which kernels it is for: before the first kernel, every kernel of the
// file (a size set then gives each kernel the settings it has parameters for); between two
// kernels, the next one; inside a kernel's braces, that kernel.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "frontends/cli/scalar_values.h"

namespace tilert::conformance {

struct Directives {
  std::vector<std::vector<check::SizeSetting>> size_sets;
  std::optional<std::string> skip_reason;
};

struct FileDirectives {
  Directives file_wide;
  std::map<std::string, Directives> per_kernel;  // by kernel name
};

// Errors name the line: a malformed directive, one after the last kernel.
absl::StatusOr<FileDirectives> parse_directives(std::string_view source);

}  // namespace tilert::conformance
