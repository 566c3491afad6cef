#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {

TEST_CASE("roles: a role group accounts for every thread of the block") {
  expect_one(R"(kernel k() grid(1) threads(256) requires(roles) {
  role producer(threads: 128) {
  }
  role consumer(threads: 64) {
  }
})",
             "role-threads", 2, "roles use 192 threads (producer 128 + consumer 64) but the block has 256");
}

TEST_CASE("roles: not nested in another role") {
  expect_one(R"(kernel k() grid(1) threads(256) requires(roles) {
  role outer(threads: 256) {
    role inner(threads: 256) {
    }
  }
})",
             "role-placement", 3, "role inner is nested in role at line 2 (outer)");
}

TEST_CASE("roles: not under thread-dependent control flow") {
  expect_one(R"(kernel k() grid(1) threads(256) requires(roles) {
  if tx < 128 {
    role only(threads: 256) {
    }
  }
})",
             "role-placement", 3, "role only inside control flow that depends on the thread index (if at line 2)");
}

TEST_CASE("roles: names are unique in a kernel; each group is checked on its own") {
  expect_one(R"(kernel k() grid(1) threads(256) requires(roles) {
  role a(threads: 128) {
  }
  role b(threads: 128) {
  }
  barrier
  role a(threads: 200) {
  }
  role c(threads: 56) {
  }
})",
             "role-name", 7, "role name a is used twice (first: role at line 2)");
}

}  // namespace tilert::testing
