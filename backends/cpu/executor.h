// Execution of one task's statements (a block's stream or a role) as a group of threads with an
// active mask: tile ops run once per group, thread-level statements once per active thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/memory.h"
#include "backends/cpu/race_check.h"
#include "backends/cpu/scheduler.h"
#include "backends/cpu/sync.h"
#include "backends/cpu/sync_trace.h"
#include "backends/cpu/values.h"
#include "ir/kernel.h"

namespace tilert::cpu {

// What every block of one launch shares.
struct LaunchState {
  explicit LaunchState(const Kernel& k) : kernel(k) {}
  const Kernel& kernel;
  Precision precision = Precision::kExact;
  std::vector<Value> scalars;         // by parameter position (scalar parameters)
  std::vector<GlobalTensor> tensors;  // by parameter position (tensor parameters)
  std::mutex atomic_mutex;            // atomic_add on global tensors (blocks run in parallel)
  std::atomic<bool> cancelled{false};

  bool exact() const { return precision == Precision::kExact; }
};

struct ClusterState {
  int64_t threads = 0;  // every thread of every block of the cluster
  bool many_blocks = false;
  ThreadBarrier barrier;
  std::unique_ptr<ClusterScheduler> scheduler;
  std::unique_ptr<RaceChecker> races;  // RunOptions::check_races only
};

struct BlockState {
  int64_t index[3] = {0, 0, 0};
  int64_t threads = 0;
  std::vector<std::unique_ptr<Tile>> tiles;      // by symbol: shared, fragment, local, loop variable
  std::vector<std::vector<Mbarrier>> mbarriers;  // by symbol
  ThreadBarrier barrier;
  std::map<int64_t, ThreadBarrier> named_barriers;
  ClusterState* cluster = nullptr;
};

// The threads executing a statement: thread `first + lane` is active when on[lane].
struct ActiveThreads {
  int64_t first = 0;
  std::vector<uint8_t> on;

  static ActiveThreads all(int64_t first, int64_t count);
  int64_t count() const;
  bool full() const { return count() == static_cast<int64_t>(on.size()); }
  int64_t first_active() const;  // a tx; -1 when none is active
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (size_t lane = 0; lane < on.size(); ++lane)
      if (on[lane]) fn(first + static_cast<int64_t>(lane));
  }
};

class TaskExecutor {
 public:
  // An executor lives as long as its task runs statements: the span of its sync-profile lane.
  TaskExecutor(LaunchState& launch, BlockState& block, ClusterScheduler& scheduler, Task& task)
      : launch_(launch), kernel_(launch.kernel), block_(block), scheduler_(scheduler), task_(task),
        trace_lane_(SyncTrace::begin_lane(launch.kernel, block.index, task)) {}
  ~TaskExecutor() { SyncTrace::end_lane(trace_lane_); }
  TaskExecutor(const TaskExecutor&) = delete;
  TaskExecutor& operator=(const TaskExecutor&) = delete;

  absl::Status run(const Block& body, const ActiveThreads& threads);

  // ---- what the op implementations (tile_ops.cc, exec_sync.cc) build on ----
  const Kernel& kernel() const { return kernel_; }
  LaunchState& launch() { return launch_; }
  BlockState& block() { return block_; }
  bool exact() const { return launch_.exact(); }
  ClusterScheduler& scheduler() { return scheduler_; }
  Task& task() { return task_; }
  // Race checking (RunOptions::check_races): this task's hooks, or nullptr when not checking.
  TaskRaces* races() { return races_; }
  void set_races(TaskRaces* races) { races_ = races; }
  // Sync profiling (sync_trace.h): this task's lane, or nullptr when not profiling.
  SyncLane* trace_lane() { return trace_lane_; }
  const Stmt* current_stmt() const { return current_; }
  // "kernel K line L: op: message" for the statement being executed.
  absl::Status error(std::string_view message) const;
  // " at line L", or nothing where the line is unknown.
  std::string at_line() const;
  // Tile ops are collective: the whole group, outside thread-dependent control flow and outside
  // parallel bodies.
  absl::Status check_collective(const ActiveThreads& threads) const;
  // The storage of a shared/fragment/per-thread symbol; an error when its declaration has not run.
  absl::Status storage(SymbolId id, Tile** out) const;
  // The global tensor bound to parameter `id`, or an error when `id` is not a tensor parameter.
  absl::Status tensor(SymbolId id, const GlobalTensor** out) const;
  // Evaluates `e` for thread `tx`.
  absl::Status eval(const Expr& e, int64_t tx, Value* out);
  // Evaluates `e` for the group: every active thread must compute the same value.
  absl::Status eval_uniform(const Expr& e, const ActiveThreads& threads, std::string_view what, Value* out);
  absl::Status eval_uniform_int(const Expr& e, const ActiveThreads& threads, std::string_view what,
                                int64_t* out);

 private:
  // statements (exec.cc)
  absl::Status exec_block(const Block& body, const ActiveThreads& threads);
  absl::Status exec_stmt(const Stmt& stmt, const ActiveThreads& threads);
  absl::Status exec_declare(const DeclareOp& op, const ActiveThreads& threads);
  absl::Status exec_for(const ForOp& op, const ActiveThreads& threads);
  absl::Status exec_if(const IfOp& op, const ActiveThreads& threads);
  absl::Status exec_roles(const std::vector<const RoleOp*>& roles, const ActiveThreads& threads);
  absl::Status exec_parallel(const ParallelOp& op, const ActiveThreads& threads);
  // thread-level stores (exec_thread.cc)
  absl::Status exec_assign(const AssignOp& op, const ActiveThreads& threads);
  absl::Status exec_atomic_add(const AtomicAddOp& op, const ActiveThreads& threads);
  absl::Status element_offset(SymbolId id, const std::vector<Expr>& indices, int64_t tx, int64_t* offset);
  Tile* loop_variable(SymbolId id);
  // expressions (eval.cc)
  absl::Status eval_symbol(const Expr& e, int64_t tx, Value* out);
  absl::Status eval_load(const Expr& e, int64_t tx, Value* out);
  absl::Status eval_binary(const Expr& e, int64_t tx, Value* out);
  absl::Status eval_call(const Expr& e, int64_t tx, Value* out);
  bool thread_dependent(const Expr& e) const;
  // Writes a per-thread variable of thread `tx`; inside a parallel body a variable declared
  // outside the body is written for every thread of the group (the body runs as one thread).
  void write_per_thread(Tile& tile, SymbolId id, int64_t tx, int64_t offset, Value v);

  LaunchState& launch_;
  const Kernel& kernel_;
  BlockState& block_;
  ClusterScheduler& scheduler_;
  Task& task_;
  const Stmt* current_ = nullptr;  // the statement being executed, for error messages
  TaskRaces* races_ = nullptr;     // set only in race-checking mode
  SyncLane* trace_lane_ = nullptr;  // set only while a sync trace records this kernel

  const ActiveThreads* parallel_threads_ = nullptr;  // set while a parallel body runs
  std::vector<uint8_t> parallel_local_;              // by symbol: declared inside that body
};

}  // namespace tilert::cpu
