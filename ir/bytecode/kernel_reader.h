// Reads one kernel of the kernels section (symbols, header, body), validating as it goes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/bytecode/cursor.h"
#include "ir/kernel.h"

namespace tilert::bytecode {

absl::Status read_kernel(Cursor& cursor, const std::vector<std::string>& strings, Kernel* out);

}  // namespace tilert::bytecode
