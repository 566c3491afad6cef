// Sync profiling of CPU launches (`tilert profile`): host clock reads around every barrier wait
// and arrive, per block and per task (the block's statement stream, or one role).
//
// Recording is off unless a SyncTrace is started for a kernel. When off, the backend pays one
// atomic load per task it creates (TaskExecutor's constructor) and one null test per sync op;
// nothing is timed or allocated. While a trace records, every launch of its kernel in the process
// records into it, so one trace records at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace tilert::cpu {

struct Task;
class SyncTrace;

enum class SyncEventKind {
  kWait,    // the task stopped until a barrier let it pass (block, named, cluster, mbarrier wait,
            // subgroup barrier); the span is the time it could not run its own statements
  kArrive,  // a non-blocking arrival (mbarrier arrive / arrive_expect_tx, named barrier arrive)
};

struct SyncEvent {
  SyncEventKind kind = SyncEventKind::kWait;
  std::string name;  // "mbarrier full[0] parity 0 at line 9", "barrier at line 5"
  int64_t start_ns = 0;  // since the trace started
  int64_t end_ns = 0;
  int64_t threads = 0;  // threads of the group that executed the op
};

// One run of one task: a block's statement stream ("block") or a role of a block.
struct SyncLane {
  const SyncTrace* trace = nullptr;
  int64_t block[3] = {0, 0, 0};
  std::string role;  // the role's name, or "block" for the block's own statements
  std::string task;  // the scheduler's label: "role producer (threads 0..127)"
  int64_t first_thread = 0;
  int64_t thread_count = 0;
  int64_t start_ns = 0;  // the task got to run its statements
  int64_t end_ns = 0;    // it finished them
  std::vector<SyncEvent> events;
  // Spans of the task's child roles: the task itself waits for them (it joins) meanwhile.
  std::vector<std::pair<int64_t, int64_t>> child_spans;
  const Task* owner = nullptr;  // the task, while it runs

  // Appends an event from `start_ns` to now. Only the task owning the lane calls these.
  void record(SyncEventKind kind, std::string name, int64_t start_ns, int64_t threads);
  int64_t now_ns() const;
};

// Whole-lane sums: wait and busy time exclude each other and the time spent joining child roles.
struct LaneTotals {
  int64_t waits = 0;
  int64_t arrives = 0;
  int64_t wait_ns = 0;
  int64_t join_ns = 0;
  int64_t busy_ns = 0;
};
LaneTotals lane_totals(const SyncLane& lane);

class SyncTrace {
 public:
  SyncTrace() : origin_(std::chrono::steady_clock::now()) {}
  ~SyncTrace();
  SyncTrace(const SyncTrace&) = delete;
  SyncTrace& operator=(const SyncTrace&) = delete;

  // Records launches of `kernel` (compared by address) until stop(). FailedPrecondition when
  // another trace is recording.
  absl::Status start(const Kernel& kernel);
  void stop();

  // Every finished lane, in the order the tasks started.
  std::vector<const SyncLane*> lanes() const;
  int64_t now_ns() const;

  // ---- hooks of the CPU backend (executor.h) ----
  // The lane of a task starting to run `kernel`'s statements for block `block_index`, or nullptr
  // when no trace records this kernel.
  static SyncLane* begin_lane(const Kernel& kernel, const int64_t block_index[3], const Task& task);
  static void end_lane(SyncLane* lane);  // nullptr: nothing

 private:
  SyncLane* add_lane(const int64_t block_index[3], const Task& task);
  void finish_lane(SyncLane* lane);

  const std::chrono::steady_clock::time_point origin_;
  const Kernel* kernel_ = nullptr;
  mutable std::mutex mu_;
  std::deque<SyncLane> lanes_;              // stable addresses
  std::map<const Task*, SyncLane*> live_;  // lanes of running tasks, to find a role's parent
};

}  // namespace tilert::cpu
