// The static sync rules of ir/verify/sync_protocol.cc: deadlocks, stage cycles, arrival counts and
// shared-memory races found by executing the synchronization skeleton with parameter defaults.
#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

// A two-stage producer/consumer ring; each test edits a line of it.
constexpr std::string_view kRing = R"(kernel ring(A: f32[N], C: f32[N], N: i32 = 256)
    grid(1) threads(256) requires(mbarrier, roles, async_copy) {
  shared As: f32[2, 64]
  mbarrier full[2](arrivals: 1)
  mbarrier empty[2](arrivals: 128)
  role producer(threads: 128) {
    serial k in 0 .. ceildiv(N, 64) {
      wait empty[k % 2] parity((k / 2 + 1) % 2)
      arrive_expect_tx full[k % 2] bytes(64 * 4)
      copy_async A[k * 64 +: 64] -> As[k % 2] complete(full[k % 2])
    }
  }
  role consumer(threads: 128) {
    serial k in 0 .. ceildiv(N, 64) {
      wait full[k % 2] parity((k / 2) % 2)
      copy As[k % 2] -> C[k * 64 +: 64]
      arrive empty[k % 2]
    }
  }
})";

std::string edit(std::string_view source, std::string_view from, std::string_view to) {
  std::string text(source);
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

TEST_CASE("sync protocol: a correct ring verifies clean, also with a parameter without default") {
  expect_clean(kRing);
  expect_clean(edit(kRing, "N: i32 = 256", "N: i32"));  // skipped: the trip count is unknown
  expect_clean(edit(kRing, "N: i32 = 256", "N: i32 = 64000"));
}

TEST_CASE("sync protocol: a wrong producer parity is a producer/consumer stage cycle") {
  std::string source = edit(kRing, "parity((k / 2 + 1) % 2)", "parity((k / 2) % 2)");
  Diagnostic d = expect_one(source, "mbarrier-deadlock", 8,
                            "producer/consumer stage cycle: role producer waits on empty[0] which role consumer "
                            "arrives at only after full[0] which role producer arrives at only after empty[0]");
  CHECK(d.message.find("role producer waits on empty[0] parity 0 at line 8 (phase 0: 0 of 128 arrivals, 0 bytes "
                       "pending) while role consumer waits on full[0] parity 0 at line 15 (phase 0: 0 of 1 "
                       "arrivals, 0 bytes pending)") != std::string::npos);
  CHECK(d.severity == Severity::kError);
  CHECK(d.to_string().find("[mbarrier-deadlock]") != std::string::npos);

  // As a warning: listed, but the module stays valid.
  auto module = parse_tile(source, "test.tile");
  REQUIRE(module.ok());
  VerifyOptions lenient;
  lenient.sync_protocol_severity = Severity::kWarning;
  std::vector<Diagnostic> warnings = verify_module(*module, lenient);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].severity == Severity::kWarning);
  CHECK(warnings[0].to_string().find("kernel ring, line 8: warning: wait: producer/consumer") == 0);
  CHECK(verify_module_status(*module, lenient).ok());
  CHECK(absl::IsInvalidArgument(verify_module_status(*module)));
}

TEST_CASE("sync protocol: the deadlock appears only once the ring wraps") {
  // One lap (two steps) never reuses a stage, so the wrong parity on the second lap needs N > 128.
  std::string source = edit(kRing, "parity((k / 2) % 2)", "parity(0)");
  expect_clean(edit(source, "N: i32 = 256", "N: i32 = 128"));
  // The consumer runs ahead through stale phases and leaves empty[0] a phase further than the
  // producer's next wait expects.
  expect_one(source, "mbarrier-deadlock", 8,
             "role producer waits on empty[0] parity 0 at line 8 (phase 2: 0 of 128 arrivals, 0 bytes pending); "
             "nothing left to run can complete that wait");
}

TEST_CASE("sync protocol: an arrival count no role can reach") {
  expect_one(edit(kRing, "empty[2](arrivals: 128)", "empty[2](arrivals: 129)"), "mbarrier-arrival-count", 8,
             "arrival count mismatch: empty expects 129 arrivals per phase but its arrivals add up to at most 128 "
             "(role consumer: 128 at line 17)");
  // Single-thread arrivals: `if tx == c` counts one arrival.
  expect_one(edit(kRing, "      arrive empty[k % 2]", "      if tx == 128 {\n        arrive empty[k % 2]\n      }"),
             "mbarrier-arrival-count", 8, "add up to at most 1 (role consumer: 1 at line 18)");
  expect_clean(edit(edit(kRing, "      arrive empty[k % 2]", "      if tx % 32 == 0 {\n        arrive empty[k % 2]\n      }"),
                    "empty[2](arrivals: 128)", "empty[2](arrivals: 4)"));
}

TEST_CASE("sync protocol: an arrival after a phase has all its arrivals is an overshoot") {
  expect_one(R"(kernel k(A: f32[64]) grid(1) threads(32) requires(mbarrier, async_copy) {
  shared S: f32[64]
  mbarrier ready(arrivals: 1)
  if tx == 0 {
    arrive_expect_tx ready bytes(256)
    arrive ready
  }
  copy_async A[0 +: 64] -> S complete(ready)
  wait ready parity(0)
})",
             "mbarrier-arrival-count", 6,
             "arrival count mismatch: the block makes 1 more arrival on ready[0] at line 6 after phase 0 already "
             "has all 1 (256 bytes still pending)");
}

TEST_CASE("sync protocol: shared-memory races between roles") {
  // The consumer reads a stage before waiting on full.
  std::string early_read = edit(edit(kRing, "      wait full[k % 2] parity((k / 2) % 2)\n", ""),
                                "      arrive empty[k % 2]", "      wait full[k % 2] parity((k / 2) % 2)\n      arrive empty[k % 2]");
  expect_one(early_read, "shared-race", 15,
             "shared-memory race on As[0]: copy_async in role producer at line 10 and copy in role consumer at "
             "line 15 are not ordered by any barrier");
  // Different stages never race: the consumer only ever touches stage 1 before its wait.
  expect_clean(R"(kernel k(A: f32[64], C: f32[64]) grid(1) threads(64) requires(mbarrier, roles, async_copy) {
  shared S: f32[2, 64]
  mbarrier full(arrivals: 1)
  role producer(threads: 32) {
    arrive_expect_tx full bytes(256)
    copy_async A[0 +: 64] -> S[0] complete(full)
  }
  role consumer(threads: 32) {
    fill S[1], 0.0
    wait full parity(0)
    copy S[0] -> C[0 +: 64]
  }
})");
}

TEST_CASE("sync protocol: named barriers order the roles they join") {
  constexpr std::string_view kHandOff = R"(kernel k(X: f32[32], Y: f32[32]) grid(1) threads(64) requires(named_barrier, roles) {
  shared chunk: f32[32]
  role loader(threads: 32) {
    copy X -> chunk
    named_arrive id(1) threads(64)
  }
  role user(threads: 32) {
    named_barrier id(1) threads(64)
    copy chunk -> Y
  }
})";
  expect_clean(kHandOff);
  expect_one(edit(kHandOff, "    named_barrier id(1) threads(64)\n    copy chunk -> Y", "    copy chunk -> Y\n    named_barrier id(1) threads(64)"),
             "shared-race", 8, "shared-memory race on chunk: copy in role loader at line 4 and copy in role user");
  // A named barrier that never fills.
  expect_one(edit(kHandOff, "named_arrive id(1) threads(64)", "named_arrive id(2) threads(64)"), "mbarrier-deadlock", 8,
             "role user waits on named barrier 1 at line 8 (32 of 64 threads arrived)");
}

TEST_CASE("sync protocol: kernels it cannot evaluate exactly are skipped") {
  // The parity is a run-time argument.
  expect_clean(R"(kernel k(Out: f32[64], p: i32) grid(1) threads(64) requires(mbarrier, roles) {
  mbarrier ready(arrivals: 32)
  role producer(threads: 32) {
    wait ready parity(p)
    arrive ready
  }
  role consumer(threads: 32) {
    wait ready parity(0)
    Out[tx] = 1.0
  }
})");
  // A condition on loaded data around a barrier.
  expect_clean(R"(kernel k(F: i32[1]) grid(1) threads(32) requires(mbarrier) {
  mbarrier b(arrivals: 32)
  if F[0] > 0 {
    arrive b
  }
  wait b parity(0)
})");
}

}  // namespace tilert::testing
