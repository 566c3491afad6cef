// The barrier pass on small kernels: placement, redundant hand barriers, divergence, loops.
#include "ir/passes/insert_barriers.h"

#include <doctest/doctest.h>

#include <string>

#include "frontends/text/printer.h"
#include "ir/verify/verify.h"
#include "pass_test_util.h"

namespace tilert {
namespace {

struct PassResult {
  Kernel kernel;
  BarrierReport report;
};

PassResult run_pass(std::string_view source) {
  Module m = testing::parse_or_fail(source);
  Kernel k = m.kernels.at(0);
  auto report = insert_barriers(k);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  Module out;
  out.kernels.push_back(k);
  absl::Status valid = verify_module_status(out);
  CHECK_MESSAGE(valid.ok(), valid.ToString());
  return {k, *report};
}

// The op names of a block, for asserting where the barriers went.
std::string ops(const Block& block) {
  std::string text;
  for (const Stmt& s : block) text += std::string(stmt_op_name(s)) + " ";
  return text;
}

TEST_CASE("straight-line code gets one barrier per RAW chain, placed before the reader") {
  PassResult r = run_pass(R"(kernel k(X: f32[64], Y: f32[64]) grid(1) threads(64) {
  shared a: f32[64]
  shared b: f32[64]
  fragment f: f32[64]
  copy X[0 +: 64] -> a
  copy X[0 +: 64] -> b
  copy a -> f
  copy b -> f
  copy f -> Y[0 +: 64]
}
)");
  CHECK(r.report.inserted == 1);  // one barrier covers a and b
  CHECK(ops(r.kernel.body) == "declare declare declare copy copy barrier copy copy copy ");
  CHECK(r.kernel.body[5].loc.line == 7);  // the location of the statement it precedes
}

TEST_CASE("redundant hand-written barriers are removed and reported with their lines") {
  PassResult r = run_pass(R"(kernel k(X: f32[64], Y: f32[64]) grid(1) threads(64) {
  shared a: f32[64]
  fragment f: f32[64]
  barrier
  copy X[0 +: 64] -> a
  barrier
  barrier
  copy a -> f
  barrier
  copy f -> Y[0 +: 64]
}
)");
  CHECK(r.report.inserted == 0);
  CHECK(r.report.removed == 3);
  CHECK(r.report.removed_lines == std::vector<uint32_t>{4, 7, 9});
  CHECK(testing::count_barriers(r.kernel) == 1);
}

TEST_CASE("a write under if tx < 32 gets its barrier after the if, at uniform level") {
  PassResult r = run_pass(R"(kernel k(X: f32[64], Y: f32[64]) grid(1) threads(64) {
  shared a: f32[64]
  if tx < 32 {
    a[tx] = X[tx] + X[tx + 32]
  }
  Y[tx] = a[63 - tx]
}
)");
  CHECK(r.report.inserted == 1);
  CHECK(ops(r.kernel.body) == "declare if barrier assign ");
  CHECK(r.kernel.body[2].loc.line == 6);
}

TEST_CASE("a dependency entirely inside if tx < 32 is an error naming both statements") {
  Module m = testing::parse_or_fail(R"(kernel k(X: f32[64], Y: f32[64]) grid(1) threads(64) {
  shared a: f32[64]
  if tx < 32 {
    a[tx] = X[tx]
    Y[tx] = a[31 - tx]
  }
}
)");
  Kernel k = m.kernels[0];
  auto report = insert_barriers(k);
  REQUIRE_FALSE(report.ok());
  std::string message(report.status().message());
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(message.find("kernel k, line 5: assign reads a, which assign at line 4 writes") !=
        std::string::npos);
  CHECK(message.find("(if at line 3)") != std::string::npos);
  CHECK(k == m.kernels[0]);  // unchanged on error
}

TEST_CASE("a carried dependency inside a thread-dependent loop is an error") {
  Module m = testing::parse_or_fail(R"(kernel k(X: f32[64], n: i32 = 4) grid(1) threads(64) {
  shared a: f32[64]
  local v: f32
  v = 0.0
  if tx < 32 {
    serial i in 0 .. n {
      v = v + a[(tx + i) % 64]
      a[tx] = v
    }
  }
}
)");
  Kernel k = m.kernels[0];
  auto report = insert_barriers(k);
  REQUIRE_FALSE(report.ok());
  CHECK(std::string(report.status().message()).find("line 8: assign writes a") !=
        std::string::npos);
}

TEST_CASE("uniform ifs get barriers inside their branches; the join keeps both branches' accesses") {
  PassResult r = run_pass(R"(kernel k(X: f32[64], Y: f32[64], n: i32 = 1) grid(1) threads(64) {
  shared a: f32[64]
  fragment f: f32[64]
  if n > 0 {
    copy X[0 +: 64] -> a
    copy a -> f
  } else {
    fill a, 1.0
  }
  copy a -> Y[0 +: 64]
}
)");
  CHECK(r.report.inserted == 2);
  auto* branch = r.kernel.body[2].as<IfOp>();
  REQUIRE(branch);
  CHECK(ops(branch->then_body) == "copy barrier copy ");
  CHECK(ops(branch->else_body) == "fill ");
  CHECK(ops(r.kernel.body) == "declare declare if barrier copy ");
}

TEST_CASE("loop-carried WAR: one barrier at the top of the body covers all carried pairs") {
  PassResult r = run_pass(R"(kernel k(X: f32[256], Y: f32[64]) grid(1) threads(64) {
  shared a: f32[64]
  shared b: f32[64]
  fragment f: f32[64]
  serial i in 0 .. 4 {
    copy X[i * 64 +: 64] -> a
    copy X[i * 64 +: 64] -> b
    copy a -> f
    copy b -> f
  }
  copy f -> Y[0 +: 64]
}
)");
  CHECK(r.report.inserted == 2);
  auto* loop = r.kernel.body[3].as<ForOp>();
  REQUIRE(loop);
  CHECK(ops(loop->body) == "barrier copy copy barrier copy copy ");
}

TEST_CASE("a hand-written loop keeps the barriers it needs and loses the duplicate") {
  PassResult r = run_pass(R"(kernel k(X: f32[256], Y: f32[64]) grid(1) threads(64) {
  shared a: f32[64]
  fragment f: f32[64]
  serial i in 0 .. 4 {
    barrier
    copy X[i * 64 +: 64] -> a
    barrier
    copy a -> f
    barrier
  }
  copy f -> Y[0 +: 64]
}
)");
  CHECK(r.report.inserted == 0);
  CHECK(r.report.removed == 1);  // the one at the end of the body: the top one orders the WAR
  CHECK(r.report.removed_lines == std::vector<uint32_t>{9});
  auto* loop = r.kernel.body[2].as<ForOp>();
  REQUIRE(loop);
  CHECK(ops(loop->body) == "barrier copy barrier copy ");
}

TEST_CASE("roles are left unchanged") {
  PassResult r = run_pass(R"(kernel k(X: f32[64], Y: f32[64]) grid(1) threads(128)
    requires(roles, named_barrier) {
  shared a: f32[64]
  fragment f: f32[64]
  role one(threads: 64) {
    copy X[0 +: 64] -> a
    named_arrive id(1) threads(128)
  }
  role two(threads: 64) {
    named_barrier id(1) threads(128)
    copy a -> f
    copy f -> Y[0 +: 64]
  }
}
)");
  CHECK(r.report.inserted == 0);
  CHECK(testing::count_barriers(r.kernel) == 0);
}

TEST_CASE("the module version reports every kernel and the output prints and reparses") {
  Module m = testing::parse_or_fail(R"(kernel a(X: f32[64], Y: f32[64]) grid(1) threads(64) {
  shared s: f32[64]
  copy X[0 +: 64] -> s
  copy s -> Y[0 +: 64]
}

kernel b(X: f32[64], Y: f32[64]) grid(1) threads(64) {
  copy X[0 +: 64] -> Y[0 +: 64]
}
)");
  auto reports = insert_barriers(m);
  REQUIRE(reports.ok());
  REQUIRE(reports->size() == 2);
  CHECK((*reports)[0].kernel == "a");
  CHECK((*reports)[0].inserted == 1);
  CHECK((*reports)[1].inserted == 0);
  Module reparsed = testing::parse_or_fail(print_tile(m));
  CHECK(reparsed == m);
}

}  // namespace
}  // namespace tilert
