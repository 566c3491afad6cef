// Data-race detection on shared memory for the CPU reference (RunOptions::check_races).
//
// The cooperative scheduler runs the tasks of a cluster one at a time and switches only at waits,
// so a missing synchronization silently gives one deterministic result. In checking mode every
// access to a shared tile is checked against happens-before, built from vector clocks:
//
// - Each task (a block's statement stream, a role) owns a slot of the vector clocks. A role starts
//   with its parent's clock (fork); the parent resumes with the join of its roles' (join).
// - Releases: mbarrier arrive / arrive_expect_tx and copy_async completions join the task's clock
//   into the barrier; block, named and cluster barriers join it into the phase being arrived at.
//   Acquires: a returning mbarrier wait takes the clock of the barrier's completed phases; a
//   returning barrier wait takes the join of every arrival of its phase.
// - Shadow memory, per shared element: the last write (slot, lane, clock, site) and, per slot, the
//   latest read. Two accesses race when they touch the same element, at least one writes, and
//   neither happens before the other.
// - Thread-level code (assignments and loads outside tile ops and parallel bodies) is checked per
//   lane as well: two different threads of the same task race unless a barrier the task waited on
//   (or a subgroup_barrier, for threads of one subgroup of kSubgroupSize) separates them.
// - Tile ops (copy, copy_async, gemm, fill, reduce, parallel bodies) are accesses of the whole group
//   and never race with the same task's other accesses: which thread moves which element is the
//   lowerer's choice, and the barriers among those threads are the barrier-insertion pass's job.
//
// Approximations, all on the side of reporting less: an mbarrier's acquire clock accumulates every
// phase completed so far; reads of one task keep only the latest sync interval's (up to two lanes);
// a role inherits its parent's thread-level writes as if the split were a barrier; atomic_add is
// not checked. A reported race is always a real one under the IR's semantics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace tilert::cpu {

class Tile;
class Mbarrier;
class ThreadBarrier;
struct BlockState;

// The lane of an access made by a tile op: the whole group.
inline constexpr int64_t kGroupLane = -1;
// Threads ordered by a subgroup_barrier: the subgroup of thread tx is tx / kSubgroupSize (an
// NVIDIA warp; kernels that assume larger subgroups are reported against this one).
inline constexpr int64_t kSubgroupSize = 32;

class RaceChecker;

// One task's view of happens-before; the hooks the executor calls. Every method is called by the
// task holding the cluster's token, so nothing here needs locking.
class TaskRaces {
 public:
  TaskRaces(RaceChecker& checker, int slot, const BlockState& block, const std::string* role,
            TaskRaces* parent);

  // Accesses to element `offset` of a shared tile by thread `lane` (or kGroupLane) while
  // executing `site`. A race is recorded in the checker (see RaceChecker::status).
  void read(const Tile& tile, int64_t offset, int64_t lane, const Stmt* site);
  void write(const Tile& tile, int64_t offset, int64_t lane, const Stmt* site);

  // Block, named and cluster barriers: arrival at `phase` (`waits`: the task will wait on it), and
  // the return of that wait.
  void barrier_arrive(const ThreadBarrier& barrier, uint64_t phase, bool waits);
  void barrier_passed(const ThreadBarrier& barrier, uint64_t phase);
  // An arrival on, or an async copy completing on, `barrier`; `phases_before` is its count of
  // completed phases before the arrival.
  void mbarrier_release(const Mbarrier& barrier, int64_t phases_before);
  void mbarrier_passed(const Mbarrier& barrier);
  // subgroup_barrier executed by the threads `first + lane` where on[lane].
  void subgroup_barrier(int64_t first, const std::vector<uint8_t>& on);

  // Roles: a child starts from this task's clock; finish() hands the child's clock to its parent;
  // join_children() takes them all once the roles are done.
  TaskRaces* start_child(size_t position, const std::string* role);
  void finish();
  void join_children();

 private:
  friend class RaceChecker;
  void tick();
  void sync_all_lanes();

  RaceChecker& checker_;
  int slot_;
  const BlockState& block_;
  const std::string* role_;  // nullptr: the block's own stream
  TaskRaces* parent_;
  std::vector<uint32_t> clock_;             // by slot
  std::vector<uint32_t> children_clock_;    // join of the finished roles' clocks
  std::vector<int> child_slots_;            // by role position: reused by later roles
};

// The race checker of one cluster: slots, shadow memory, barrier clocks, the first race.
class RaceChecker {
 public:
  explicit RaceChecker(std::string kernel_name) : kernel_name_(std::move(kernel_name)) {}

  // The task of a block's statement stream.
  TaskRaces* start_root(const BlockState& block);
  // OK, or the first race found (DataLoss).
  const absl::Status& status() const { return first_race_; }
  // Forgets the accesses to a tile about to be replaced by a new declaration.
  void forget(const Tile& tile) {
    shadows_.erase(&tile);
    cached_tile_ = nullptr;
  }

 private:
  friend class TaskRaces;

  // One access in shadow memory.
  struct Access {
    int slot = -1;  // -1: none
    int64_t lane = kGroupLane;
    uint32_t clock = 0;         // the slot's own clock component at the access
    uint64_t epoch = 0;         // the slot's count of block-wide waits at the access
    uint64_t subgroup_epoch = 0;  // ... and of syncs of the lane's subgroup
    const Stmt* site = nullptr;
    const std::string* role = nullptr;
  };
  struct Read {
    Access first;
    int64_t other_lane = kGroupLane - 1;  // a second thread that read in the same interval
    const Stmt* other_site = nullptr;
  };
  struct ElementShadow {
    Access write;
    std::vector<Read> reads;  // at most one per slot
  };
  // Per-slot sync counts, kept across the tasks that reuse a slot.
  struct SlotState {
    uint64_t epoch = 0;
    std::vector<uint64_t> subgroup_epochs;  // by tx / kSubgroupSize
  };
  struct MbarrierClock {
    std::vector<uint32_t> pending;    // every release so far
    std::vector<uint32_t> completed;  // the releases up to the latest completed phase
  };
  struct BarrierPhase {
    std::vector<uint32_t> clock;
    int64_t waiters = 0;  // arrivals that will acquire it; the phase is dropped after the last
  };

  int new_slot();
  std::vector<ElementShadow>& shadow(const Tile& tile);
  Access access_of(const TaskRaces& task, int64_t lane, const Stmt* site);
  // Does `earlier` happen before the access `later` of task `task`?
  bool ordered(const Access& earlier, const Access& later, const TaskRaces& task) const;
  void report(const TaskRaces& task, const Tile& tile, int64_t offset, const Access& earlier,
              bool earlier_writes, const Access& later, bool later_writes);

  std::string kernel_name_;
  std::vector<SlotState> slots_;
  std::vector<std::unique_ptr<TaskRaces>> tasks_;
  std::unordered_map<const Tile*, std::vector<ElementShadow>> shadows_;
  const Tile* cached_tile_ = nullptr;
  std::vector<ElementShadow>* cached_shadow_ = nullptr;
  std::unordered_map<const Mbarrier*, MbarrierClock> mbarriers_;
  std::unordered_map<const ThreadBarrier*, std::unordered_map<uint64_t, BarrierPhase>> barriers_;
  absl::Status first_race_;
};

}  // namespace tilert::cpu
