// Diagnostics: exact "FILE:LINE:COL: message" text, and hostile input that must fail cleanly.
#include <string>

#include "tests/frontends/text/text_test_util.h"

namespace tilert {
namespace {

using text_test::in_kernel;
using text_test::parse_error;
using text_test::read_fixture;

// in_kernel() puts the body on line 2.
TEST_CASE("syntax errors say what was expected and what was found, and where") {
  CHECK(parse_error("kernel g(M: i32)\n  threads(32)\n  grid(M, 16 {\n}\n", "gemm.tile") ==
        "gemm.tile:3:14: expected ')' to close grid(...), found '{'");
  CHECK(parse_error("kernel g() grid(1) threads(1) { copy }") ==
        "t.tile:1:38: expected a buffer name, found '}'");
  CHECK(parse_error(in_kernel("a = 1 b = 2")) == "t.tile:2:7: expected end of statement, found 'b'");
  CHECK(parse_error("kernel g() grid(1) threads(1) {\n  barrier\n") ==
        "t.tile:3:1: expected '}' to close the body of kernel, found end of input");
  CHECK(parse_error("kernel g() grid(1) threads(1) blocks(2) {}") ==
        "t.tile:1:31: expected grid(...), threads(...), cluster(...), requires(...) or '{' in the "
        "header of kernel 'g', found 'blocks'");
  CHECK(parse_error(in_kernel("fence warp")) ==
        "t.tile:2:7: expected 'block', 'cluster' or 'proxy_async' after 'fence', found 'warp'");
  CHECK(parse_error(in_kernel("mbarrier m(count: 1)")) == "t.tile:2:12: expected 'arrivals', found 'count'");
  CHECK(parse_error("barrier") == "t.tile:1:1: expected 'kernel', found 'barrier'");
  CHECK(parse_error(in_kernel("copy T[0 +: a] -> T")) == "t.tile:2:13: expected an extent after '+:', found 'a'");
  CHECK(parse_error(in_kernel("a = (b + 1")) == "t.tile:3:1: expected ')' to close '(', found '}'");
}

TEST_CASE("name errors") {
  CHECK(parse_error(in_kernel("copy T -> Bs")) == "t.tile:2:11: undeclared name 'Bs'");
  CHECK(parse_error(in_kernel("serial k in 0 .. 4 {\n  serial k in 0 .. 2 {}\n}")) ==
        "t.tile:3:10: 'k' is already declared (line 2)");
  CHECK(parse_error(in_kernel("local a: f32")) == "t.tile:2:7: 'a' is already declared (line 1)");
  CHECK(parse_error("kernel k(n: i32, n: i32) grid(1) threads(1) {}") ==
        "t.tile:1:18: 'n' is already declared (line 1)");
  CHECK(parse_error(in_kernel("local copy: f32")) ==
        "t.tile:2:7: expected a name to declare, found keyword 'copy' (keywords cannot be used as names)");
  CHECK(parse_error(in_kernel("serial k in 0 .. 4 {}\na = k")) == "t.tile:3:5: undeclared name 'k'");
  CHECK(parse_error("kernel k() grid(1) threads(1) {}\nkernel k() grid(1) threads(1) {}") ==
        "t.tile:2:1: kernel 'k' is already defined (line 1)");
}

TEST_CASE("type, function and header errors") {
  CHECK(parse_error(in_kernel("shared s: f8[4]")) == "t.tile:2:11: unknown dtype 'f8'");
  CHECK(parse_error(in_kernel("x = exp2(x, 2.0)")) == "t.tile:2:5: exp2 takes 1 argument, got 2");
  CHECK(parse_error(in_kernel("a = min(a)")) == "t.tile:2:5: min takes 2 arguments, got 1");
  CHECK(parse_error(in_kernel("a = i32(a, b)")) == "t.tile:2:5: i32 takes 1 argument, got 2");
  CHECK(parse_error("kernel k() grid(1) threads(1) requires(f16, tma) {}") ==
        "t.tile:1:45: unknown capability 'tma'");
  CHECK(parse_error("kernel k() threads(32) {}") == "t.tile:1:24: kernel 'k' needs grid(...)");
  CHECK(parse_error("kernel k() grid(1) {}") == "t.tile:1:20: kernel 'k' needs threads(...)");
  CHECK(parse_error("kernel k() grid(1, 1, 1, 1) threads(1) {}") ==
        "t.tile:1:12: grid takes 1 to 3 dimensions, got 4");
  CHECK(parse_error("kernel k() grid(1) threads(1) threads(2) {}") ==
        "t.tile:1:31: 'threads(...)' is given twice");
  CHECK(parse_error("kernel k() grid(1) threads(4294967296) {}") ==
        "t.tile:1:28: a thread count 4294967296 is too large (at most 2147483647)");
  CHECK(parse_error("kernel k(n: i32 = 1.5) grid(1) threads(1) {}") ==
        "t.tile:1:19: default value of 'n' must be an integer, found '1.5'");
  CHECK(parse_error(in_kernel("parallel i, j in 0 .. 4 {}")) ==
        "t.tile:2:1: parallel has 2 variable(s) but 1 range(s)");
}

TEST_CASE("lexical errors") {
  CHECK(parse_error(in_kernel("a = 12abc")) == "t.tile:2:5: malformed number '12abc'");
  CHECK(parse_error(in_kernel("a = 0x")) == "t.tile:2:5: malformed number '0x'");
  CHECK(parse_error(in_kernel("a = 99999999999999999999")) ==
        "t.tile:2:5: integer literal '99999999999999999999' does not fit in 64 bits");
  CHECK(parse_error(in_kernel("a = 9223372036854775808")) ==
        "t.tile:2:5: integer literal 9223372036854775808 does not fit in 64 bits");
  CHECK(parse_error(in_kernel("x = 1e400")) == "t.tile:2:5: float literal '1e400' is out of range");
  CHECK(parse_error(in_kernel("a = $")) == "t.tile:2:5: unexpected '$'");
  CHECK(parse_error(in_kernel(std::string("a = \0", 5))) == "t.tile:2:5: unexpected byte 0x00");
  CHECK(parse_error(in_kernel("a = \xff\xfe")) == "t.tile:2:5: unexpected byte 0xff");
}

TEST_CASE("deep nesting is an error, not a stack overflow") {
  std::string parens = "a = " + std::string(5000, '(') + "1" + std::string(5000, ')');
  CHECK(parse_error(in_kernel(parens)).find("nesting deeper than 200 levels") != std::string::npos);
  std::string negations = "a = " + std::string(5000, '!') + "a";
  CHECK(parse_error(in_kernel(negations)).find("nesting deeper than 200 levels") != std::string::npos);
  std::string chain = "a = 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  CHECK(parse_error(in_kernel(chain)).find("expression nested deeper than 200 levels") != std::string::npos);
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += "if true {";
  CHECK(parse_error(in_kernel(blocks)).find("nesting deeper than 200 levels") != std::string::npos);
}

TEST_CASE("every prefix of every fixture parses or fails with a located message") {
  for (const char* name : {"gemm_ws.tile", "sync.tile", "exprs.tile"}) {
    std::string text = read_fixture(name);
    for (size_t n = 0; n <= text.size(); ++n) {
      absl::StatusOr<Module> m = parse_tile(std::string_view(text).substr(0, n), "p.tile");
      if (!m.ok()) {
        CAPTURE(n);
        CHECK(m.status().message().substr(0, 7) == "p.tile:");
      }
    }
  }
}

TEST_CASE("every single-byte corruption of a fixture is handled") {
  std::string text = read_fixture("softmax.tile");
  const char replacements[] = {'\0', '(', '}', '[', '-', '\n', '\xff', '.'};
  for (size_t i = 0; i < text.size(); ++i) {
    for (char r : replacements) {
      std::string mutated = text;
      mutated[i] = r;
      absl::StatusOr<Module> m = parse_tile(mutated, "m.tile");
      if (m.ok()) {
        absl::StatusOr<Module> again = parse_tile(print_tile(*m), "printed.tile");
        REQUIRE(again.ok());
        CHECK(*again == *m);
      }
    }
  }
}

}  // namespace
}  // namespace tilert
