#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

constexpr std::string_view kTwoTiles = R"(kernel k() grid(1) threads(256) requires(f16, mbarrier) {
  shared As: f16[128, 128]
  shared Bs: f16[128, 128]
  mbarrier full[2](arrivals: 1)
  arrive full[0]
  wait full[0] parity(0)
})";

TEST_CASE("shared memory: tiles plus 8 bytes per mbarrier against the limit") {
  VerifyOptions options;
  options.shared_memory_limit = 49152;
  Diagnostic d = expect_one(kTwoTiles, "shared-memory", 1,
                            "shared memory 65552 bytes exceeds the limit 49152 (As 32768, Bs 32768, full 16)",
                            options);
  CHECK(d.op.empty());
}

TEST_CASE("shared memory: fits, or no limit given") {
  VerifyOptions options;
  options.shared_memory_limit = 65552;
  expect_clean(kTwoTiles, options);
  expect_clean(kTwoTiles);
}

}  // namespace tilert::testing
