// Shared by the verifier tests: parse a .tile text, verify it, and pick diagnostics apart.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "frontends/text/parser.h"
#include "ir/verify/verify.h"

namespace tilert::testing {

// Parses `source` (it must parse: only verification may fail) and verifies it.
inline std::vector<Diagnostic> verify_text(std::string_view source, const VerifyOptions& options = {}) {
  auto module = parse_tile(source, "test.tile");
  REQUIRE_MESSAGE(module.ok(), module.status().ToString());
  return verify_module(*module, options);
}

inline std::string all_text(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) text += d.to_string() + "\n";
  return text;
}

// Asserts exactly one diagnostic, with this rule, line and message substring; returns it.
inline Diagnostic expect_one(std::string_view source, std::string_view rule, uint32_t line,
                             std::string_view message_part, const VerifyOptions& options = {}) {
  std::vector<Diagnostic> diagnostics = verify_text(source, options);
  INFO(all_text(diagnostics));
  REQUIRE(diagnostics.size() == 1);
  const Diagnostic& d = diagnostics[0];
  CHECK(d.rule == rule);
  CHECK(d.loc.line == line);
  CHECK(d.message.find(message_part) != std::string::npos);
  return d;
}

inline void expect_clean(std::string_view source, const VerifyOptions& options = {}) {
  std::vector<Diagnostic> diagnostics = verify_text(source, options);
  INFO(all_text(diagnostics));
  CHECK(diagnostics.empty());
}

}  // namespace tilert::testing
