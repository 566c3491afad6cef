// The cluster scheduler on its own: token passing, deadlock detection, the watchdog.
#include "backends/cpu/scheduler.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

namespace tilert::cpu {
namespace {

TEST_CASE("tasks take turns at waits; a wait nobody can satisfy is a deadlock naming the task") {
  ClusterScheduler scheduler("deadlock in test", "test", std::chrono::milliseconds(10000), nullptr);
  std::vector<std::string> trace;
  bool flag = false;
  std::vector<ClusterScheduler::Body> bodies = {
      [&](Task& self) {
        trace.push_back("a waits");
        absl::Status s = scheduler.wait_until(self, [&] { return flag; }, [] { return std::string("flag"); });
        trace.push_back("a resumes");
        return s;
      },
      [&](Task& self) {
        trace.push_back("b sets");
        flag = true;
        return scheduler.wait_until(self, [] { return false; }, [] { return std::string("nothing"); });
      },
  };
  absl::Status status = scheduler.run_roots({"task a", "task b"}, bodies);
  CHECK(status.code() == absl::StatusCode::kAborted);
  CHECK(std::string(status.message()) == "deadlock in test: task b waits on nothing");
  CHECK(trace == std::vector<std::string>{"a waits", "b sets", "a resumes"});
}

TEST_CASE("the watchdog ends a cluster whose running task stops making progress") {
  ClusterScheduler scheduler("deadlock in test", "kernel K block (0,0,0)", std::chrono::milliseconds(50), nullptr);
  std::vector<ClusterScheduler::Body> bodies = {
      [&](Task& self) {
        // Stuck without reporting progress; the other task waits for the token meanwhile.
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        absl::Status alive = scheduler.check_alive();
        CHECK(alive.code() == absl::StatusCode::kDeadlineExceeded);
        (void)self;
        return alive;
      },
      [&](Task&) { return absl::OkStatus(); },
  };
  auto start = std::chrono::steady_clock::now();
  absl::Status status = scheduler.run_roots({"task a", "task b"}, bodies);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(status.message()).find("kernel K block (0,0,0): no progress for 50 ms") == 0);
}

}  // namespace
}  // namespace tilert::cpu
