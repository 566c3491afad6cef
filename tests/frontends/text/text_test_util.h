// Shared by the .tile frontend tests: fixture loading and parse shortcuts.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "frontends/text/parser.h"
#include "frontends/text/printer.h"

namespace tilert::text_test {

inline std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/tests/frontends/text/fixtures/" + name,
                   std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses text that must be valid; fails the test with the parser's message otherwise.
inline Module parse_ok(const std::string& source, const std::string& filename = "test.tile") {
  absl::StatusOr<Module> m = parse_tile(source, filename);
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  return *std::move(m);
}

// The parser's message for text that must be invalid ("OK" when it parsed).
inline std::string parse_error(const std::string& source, const std::string& filename = "t.tile") {
  absl::StatusOr<Module> m = parse_tile(source, filename);
  if (m.ok()) return "OK";
  CHECK(m.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

// A kernel header around `body` lines: one scalar per name in common use (a, b, c: i32; x: f32),
// a tensor T: f32[16, 16].
inline std::string in_kernel(const std::string& body) {
  return "kernel t(T: f32[16, 16], a: i32, b: i32, c: i32, x: f32) grid(1) threads(32) {\n" + body +
         "\n}\n";
}

}  // namespace tilert::text_test
