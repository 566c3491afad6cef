// Printer of the .tile text format: parse_tile(print_tile(m)) == m for every valid module.
#pragma once

#include <string>

#include "ir/kernel.h"

namespace tilert {

std::string print_tile(const Module& module);
std::string print_kernel(const Kernel& kernel);
// One expression in .tile syntax, names taken from `kernel`'s symbols (for diagnostics).
std::string print_expr(const Kernel& kernel, const Expr& e);

}  // namespace tilert
