// Parser of the .tile text format (grammar: frontends/text/README.md).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace tilert {

// Parses a whole .tile file into a module. Statements and symbols carry their source locations.
// Errors are InvalidArgument with the message "FILE:LINE:COL: what was expected / what is wrong".
// Names are resolved and expression types computed here (so the IR is identical to what the C++
// builder or the bytecode reader produces for the same kernel).
absl::StatusOr<Module> parse_tile(std::string_view source, std::string_view filename = "<input>");

}  // namespace tilert
