// parse(print(m)) == m and print is a fixed point, over fixtures covering every statement and
// expression form.
#include "tests/frontends/text/text_test_util.h"

namespace tilert {
namespace {

using text_test::parse_ok;
using text_test::read_fixture;

constexpr const char* kFixtures[] = {
    "gemm.tile", "gemm_ws.tile", "softmax.tile", "sync.tile", "exprs.tile", "empty_blocks.tile",
};

TEST_CASE("every fixture survives print then parse unchanged, and printing is stable") {
  for (const char* name : kFixtures) {
    CAPTURE(name);
    Module original = parse_ok(read_fixture(name), name);
    std::string printed = print_tile(original);
    Module reparsed = parse_ok(printed, "printed.tile");
    CHECK(reparsed == original);
    CHECK(print_tile(reparsed) == printed);
  }
}

TEST_CASE("the fixtures together use every statement kind") {
  bool seen[std::variant_size_v<StmtOp>] = {};
  bool named_arrive = false, else_if = false;
  for (const char* name : kFixtures) {
    for (const Kernel& k : parse_ok(read_fixture(name), name).kernels) {
      visit_stmts(k.body, [&](const Stmt& s) {
        seen[s.op.index()] = true;
        if (auto* n = s.as<NamedBarrierOp>()) named_arrive |= !n->wait;
        if (auto* i = s.as<IfOp>()) else_if |= i->else_body.size() == 1 && i->else_body[0].as<IfOp>();
      });
    }
  }
  for (size_t i = 0; i + 1 < std::variant_size_v<StmtOp>; ++i) {  // all but std::monostate
    CAPTURE(i);
    CHECK(seen[i]);
  }
  CHECK(named_arrive);
  CHECK(else_if);
}

TEST_CASE("printing uses the canonical layout") {
  Module m = parse_ok(
      "kernel k(A: f32[n], n: i32 = 8) requires(atomic) threads(64) grid(n / 64) {\n"
      "  if tx < n { A[tx] = 0.5 } else if tx == n { A[0] = 1 }\n"
      "}\n");
  CHECK(print_tile(m) ==
        "kernel k(A: f32[n], n: i32 = 8)\n"
        "    grid(n / 64) threads(64) requires(atomic) {\n"
        "  if tx < n {\n"
        "    A[tx] = 0.5\n"
        "  } else if tx == n {\n"
        "    A[0] = 1\n"
        "  }\n"
        "}\n");
}

// The README's example kernels are the documentation of record: they must parse and round-trip.
TEST_CASE("the example kernels in frontends/text/README.md parse and round-trip") {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/frontends/text/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  std::string text = readme.str();
  size_t at = text.find("## A complete kernel");
  REQUIRE(at != std::string::npos);
  int examples = 0;
  for (size_t open; (open = text.find("```\n", at)) != std::string::npos; ++examples) {
    size_t close = text.find("```", open + 4);
    REQUIRE(close != std::string::npos);
    Module m = parse_ok(text.substr(open + 4, close - open - 4), "README.md");
    CHECK(parse_ok(print_tile(m)) == m);
    at = close + 3;
  }
  CHECK(examples == 2);
}

}  // namespace
}  // namespace tilert
