// Shared by the pass tests: parse .tile text or files, run the barrier pass, and compare CPU runs.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "frontends/text/parser.h"
#include "ir/kernel.h"

namespace tilert::testing {

inline Module parse_or_fail(std::string_view source, std::string_view name = "test.tile") {
  auto module = parse_tile(source, name);
  REQUIRE_MESSAGE(module.ok(), module.status().ToString());
  return *std::move(module);
}

// Number of block barriers anywhere in the kernel.
inline int count_barriers(const Kernel& kernel) {
  int n = 0;
  visit_stmts(kernel.body, [&](const Stmt& s) { n += s.as<BarrierOp>() != nullptr; });
  return n;
}

}  // namespace tilert::testing
