// Cooperative scheduling of the tasks of one cluster: each block's statement stream and each role
// is a task on its own host thread, but only the task holding the cluster's token runs. A task
// gives the token up only when it waits on a barrier (or joins its roles) or finishes, so
// execution is deterministic and a deadlock is exact: the running task starts to wait and no
// task can take the token.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace tilert::cpu {

struct Task {
  enum class State { kReady, kRunning, kWaiting, kJoining, kDone };

  std::string label;  // "role producer (threads 0..127)", with the block when a cluster has many
  size_t index = 0;   // position in the scheduler's task list
  State state = State::kReady;
  std::function<bool()> ready;           // while waiting: may the wait return?
  std::function<std::string()> waiting;  // while waiting: "mbarrier full[0] parity 0 at line 9 (...)"
  Task* parent = nullptr;
  int live_children = 0;
  std::condition_variable wake;
};

class ClusterScheduler {
 public:
  using Body = std::function<absl::Status(Task&)>;

  // `deadlock_prefix`: "deadlock in kernel K block (0,0,0)"; `what`: "kernel K block (0,0,0)"
  // for watchdog messages. `cancelled` is raised when another cluster of the launch failed.
  ClusterScheduler(std::string deadlock_prefix, std::string what, std::chrono::milliseconds watchdog,
                   const std::atomic<bool>* cancelled);

  // Runs one root task per body (the blocks of the cluster), the first on the calling thread.
  // Returns the first error: a task's, a deadlock, the watchdog's.
  absl::Status run_roots(const std::vector<std::string>& labels, const std::vector<Body>& bodies);
  // From the running task: runs the bodies as its child tasks (roles); returns once all finished.
  absl::Status run_children(Task& self, const std::vector<std::string>& labels,
                            const std::vector<Body>& bodies);
  // From the running task: returns once `ready()` holds, letting the other tasks run meanwhile.
  // `waiting` describes what the task waits on, for deadlock reports.
  absl::Status wait_until(Task& self, std::function<bool()> ready, std::function<std::string()> waiting);
  // From the running task, regularly: counts progress for the watchdog; an error once the launch is
  // being torn down (another task failed, another cluster failed, the watchdog fired).
  absl::Status check_alive();

 private:
  using Lock = std::unique_lock<std::mutex>;

  void task_main(Task& task, const Body& body);
  void finish(Task& task, absl::Status status);
  // Passes the token from `self` (which stopped running) to the next task that can run, in
  // round-robin order; none: a deadlock (or, all done, nothing to do).
  void hand_off(Task& self, Lock& lock);
  bool can_run(const Task& t) const;
  absl::Status await_token(Task& self, Lock& lock);
  void abort(absl::Status status);  // mu_ held
  std::string waiting_tasks() const;
  std::vector<std::thread> start_threads(const std::vector<Task*>& tasks, const std::vector<Body>& bodies);

  const std::string deadlock_prefix_;
  const std::string what_;
  const std::chrono::milliseconds watchdog_;
  const std::atomic<bool>* cancelled_;

  std::mutex mu_;
  std::vector<std::unique_ptr<Task>> tasks_;
  Task* running_ = nullptr;
  std::atomic<bool> aborted_{false};
  absl::Status abort_status_;
  std::atomic<uint64_t> progress_{0};
};

}  // namespace tilert::cpu
