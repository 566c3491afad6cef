// Read/write sets and the conservative overlap rule.
#include "ir/passes/access_sets.h"

#include <doctest/doctest.h>

#include "pass_test_util.h"

namespace tilert {
namespace {

constexpr const char* kSource = R"(kernel k(X: f32[64], n: i32 = 1) grid(1) threads(64) {
  shared s: f32[2, 64]
  fragment f: f32[64]
  copy X[0 +: 64] -> s[0]
  copy s[1] -> f
  copy s[n % 2] -> f
  atomic_add s[0, tx], 1.0
  atomic_add s[0, tx], 2.0
}
)";

TEST_CASE("copies read their source and write their destination; fragments are not tracked") {
  Module m = testing::parse_or_fail(kSource);
  const Kernel& k = m.kernels[0];
  // body: declare s, declare f, copy X -> s[0], copy s[1] -> f, copy s[n % 2] -> f, 2 atomics
  std::vector<Access> load = statement_accesses(k, k.body[2]);
  REQUIRE(load.size() == 2);
  CHECK(k.symbol(load[0].buffer).name == "X");
  CHECK_FALSE(load[0].write);
  CHECK(k.symbol(load[1].buffer).name == "s");
  CHECK(load[1].write);
  CHECK(load[1].loc.line == 4);
  CHECK(load[1].op == "copy");
  std::vector<Access> store_frag = statement_accesses(k, k.body[3]);
  REQUIRE(store_frag.size() == 1);
  CHECK_FALSE(store_frag[0].write);
}

TEST_CASE("constant stage indices are disjoint, symbolic ones overlap, atomics commute") {
  Module m = testing::parse_or_fail(kSource);
  const Kernel& k = m.kernels[0];
  Access write0 = statement_accesses(k, k.body[2])[1];
  Access read1 = statement_accesses(k, k.body[3])[0];
  Access read_symbolic = statement_accesses(k, k.body[4])[0];
  CHECK_FALSE(accesses_conflict(write0, read1));
  CHECK(accesses_conflict(write0, read_symbolic));
  CHECK_FALSE(accesses_conflict(read1, read_symbolic));  // two reads
  Access atomic_a = statement_accesses(k, k.body[5])[0];
  Access atomic_b = statement_accesses(k, k.body[6])[0];
  CHECK(atomic_a.atomic);
  CHECK(access_verb(atomic_a) == "atomically updates");
  CHECK_FALSE(accesses_conflict(atomic_a, atomic_b));
  CHECK(accesses_conflict(write0, atomic_a));  // both s[0]
}

}  // namespace
}  // namespace tilert
