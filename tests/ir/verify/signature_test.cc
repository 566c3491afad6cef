#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("signature: threads per block in 1..1024") {
  Diagnostic d = expect_one(R"(kernel k() grid(1) threads(2048) {
})",
                            "kernel-threads", 1, "threads(2048) is outside 1..1024");
  CHECK(d.to_string() == "kernel k, line 1: threads(2048) is outside 1..1024 [kernel-threads]");
}

TEST_CASE("signature: grid and cluster dimensions") {
  expect_one(R"(kernel k() grid(0) threads(32) {
})",
             "kernel-grid", 1, "grid dimension 0 is 0; it must be at least 1");
  expect_one(R"(kernel k() grid(1) threads(32) cluster(2, 0) requires(cluster) {
})",
             "kernel-cluster", 1, "cluster dimension 1 is 0; it must be at least 1");
  auto module = parse_tile(R"(kernel k() grid(1) threads(32) {
})");
  REQUIRE(module.ok());
  module->kernels[0].grid = {Expr::int_const(1), Expr::int_const(1), Expr::int_const(1), Expr::int_const(1)};
  auto diagnostics = verify_module(*module);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].message == "grid has 4 dimensions; it needs 1 to 3");
  module->kernels[0].grid = {Expr::builtin(Builtin::kThreadX)};
  diagnostics = verify_module(*module);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].rule == "kernel-grid");
  CHECK(diagnostics[0].message.find("grid dimension 0 uses tx") == 0);
}

TEST_CASE("signature: tensor shapes use only integer scalar parameters") {
  expect_one(R"(kernel k(A: f32[S], S: f32) grid(1) threads(32) {
})",
             "tensor-shape", 1, "dimension 0 of A uses S, a f32 scalar parameter");
}

TEST_CASE("signature: parameter and kernel names are unique") {
  auto module = parse_tile(R"(kernel k(A: f32[N], N: i32, M: i32) grid(1) threads(32) {
}
kernel other() grid(1) threads(32) {
})");
  REQUIRE(module.ok());
  module->kernels[0].symbols[2].name = "N";
  module->kernels[1].name = "k";
  auto diagnostics = verify_module(*module);
  INFO(all_text(diagnostics));
  REQUIRE(diagnostics.size() == 2);
  CHECK(diagnostics[0].rule == "param-name");
  CHECK(diagnostics[0].message == "scalar parameter N has the same name as parameter 1 at line 1");
  CHECK(diagnostics[1].rule == "kernel-name");
  CHECK(diagnostics[1].message == "kernel name k is used twice (first at line 1)");
}

}  // namespace tilert::testing
