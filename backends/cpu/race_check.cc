#include "backends/cpu/race_check.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/executor.h"
#include "ir/status.h"

namespace tilert::cpu {
namespace {

void join_into(std::vector<uint32_t>& into, const std::vector<uint32_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

uint32_t component(const std::vector<uint32_t>& clock, int slot) {
  return static_cast<size_t>(slot) < clock.size() ? clock[static_cast<size_t>(slot)] : 0;
}

size_t subgroup_of(int64_t lane) { return static_cast<size_t>(lane / kSubgroupSize); }

}  // namespace

TaskRaces::TaskRaces(RaceChecker& checker, int slot, const BlockState& block, const std::string* role,
                     TaskRaces* parent)
    : checker_(checker), slot_(slot), block_(block), role_(role), parent_(parent) {}

void TaskRaces::tick() {
  if (clock_.size() <= static_cast<size_t>(slot_)) clock_.resize(static_cast<size_t>(slot_) + 1, 0);
  ++clock_[static_cast<size_t>(slot_)];
}

// A wait every thread of the task returned from: all of its threads' earlier accesses are ordered
// before all of their later ones.
void TaskRaces::sync_all_lanes() { ++checker_.slots_[static_cast<size_t>(slot_)].epoch; }

void TaskRaces::read(const Tile& tile, int64_t offset, int64_t lane, const Stmt* site) {
  if (!checker_.first_race_.ok()) return;
  RaceChecker::Access now = checker_.access_of(*this, lane, site);
  RaceChecker::ElementShadow& element = checker_.shadow(tile)[static_cast<size_t>(offset)];
  if (element.write.slot >= 0 && !checker_.ordered(element.write, now, *this)) {
    checker_.report(*this, tile, offset, element.write, true, now, false);
    return;
  }
  for (RaceChecker::Read& r : element.reads) {
    if (r.first.slot != slot_) continue;
    bool same_interval = r.first.epoch == now.epoch && r.first.subgroup_epoch == now.subgroup_epoch;
    if (!same_interval) {
      r = RaceChecker::Read{now};
    } else if (r.first.lane == lane) {
      r.first = now;
    } else {
      // Another thread of this task read it in the same interval: keep both threads, with the
      // newer clock (it orders after the older one for every other task).
      r.first.clock = now.clock;
      r.other_lane = lane;
      r.other_site = site;
    }
    return;
  }
  element.reads.push_back(RaceChecker::Read{now});
}

void TaskRaces::write(const Tile& tile, int64_t offset, int64_t lane, const Stmt* site) {
  if (!checker_.first_race_.ok()) return;
  RaceChecker::Access now = checker_.access_of(*this, lane, site);
  RaceChecker::ElementShadow& element = checker_.shadow(tile)[static_cast<size_t>(offset)];
  if (element.write.slot >= 0 && !checker_.ordered(element.write, now, *this)) {
    checker_.report(*this, tile, offset, element.write, true, now, true);
    return;
  }
  for (const RaceChecker::Read& r : element.reads) {
    if (!checker_.ordered(r.first, now, *this)) {
      checker_.report(*this, tile, offset, r.first, false, now, true);
      return;
    }
    if (r.other_lane >= kGroupLane) {
      RaceChecker::Access other = r.first;
      other.lane = r.other_lane;
      other.site = r.other_site;
      if (!checker_.ordered(other, now, *this)) {
        checker_.report(*this, tile, offset, other, false, now, true);
        return;
      }
    }
  }
  // Every earlier access is ordered before this write, so later accesses need only be checked
  // against the write.
  element.write = now;
  element.reads.clear();
}

void TaskRaces::barrier_arrive(const ThreadBarrier& barrier, uint64_t phase, bool waits) {
  RaceChecker::BarrierPhase& p = checker_.barriers_[&barrier][phase];
  join_into(p.clock, clock_);
  if (waits) ++p.waiters;
  tick();
}

void TaskRaces::barrier_passed(const ThreadBarrier& barrier, uint64_t phase) {
  auto& phases = checker_.barriers_[&barrier];
  RaceChecker::BarrierPhase& p = phases[phase];
  join_into(clock_, p.clock);
  if (--p.waiters <= 0) phases.erase(phase);
  sync_all_lanes();
}

void TaskRaces::mbarrier_release(const Mbarrier& barrier, int64_t phases_before) {
  RaceChecker::MbarrierClock& clock = checker_.mbarriers_[&barrier];
  join_into(clock.pending, clock_);
  if (barrier.completed_phases() > phases_before) clock.completed = clock.pending;
  tick();
}

void TaskRaces::mbarrier_passed(const Mbarrier& barrier) {
  join_into(clock_, checker_.mbarriers_[&barrier].completed);
  sync_all_lanes();
}

void TaskRaces::subgroup_barrier(int64_t first, const std::vector<uint8_t>& on) {
  std::vector<uint64_t>& epochs = checker_.slots_[static_cast<size_t>(slot_)].subgroup_epochs;
  std::vector<uint8_t> synced(epochs.size(), 0);
  for (size_t lane = 0; lane < on.size(); ++lane) {
    size_t subgroup = subgroup_of(first + static_cast<int64_t>(lane));
    if (on[lane] && subgroup < epochs.size() && !synced[subgroup]) {
      synced[subgroup] = 1;
      ++epochs[subgroup];
    }
  }
}

TaskRaces* TaskRaces::start_child(size_t position, const std::string* role) {
  if (child_slots_.size() <= position) child_slots_.resize(position + 1, -1);
  // A slot is reused only by a later role of the same parent, which happens after the earlier
  // one (the parent joined it before forking again), so its old accesses stay ordered correctly.
  if (child_slots_[position] < 0) child_slots_[position] = checker_.new_slot();
  int slot = child_slots_[position];
  auto child = std::make_unique<TaskRaces>(checker_, slot, block_, role, this);
  child->clock_ = clock_;
  child->tick();
  checker_.slots_[static_cast<size_t>(slot)].epoch++;
  checker_.tasks_.push_back(std::move(child));
  return checker_.tasks_.back().get();
}

void TaskRaces::finish() {
  if (parent_ != nullptr) join_into(parent_->children_clock_, clock_);
}

void TaskRaces::join_children() {
  join_into(clock_, children_clock_);
  children_clock_.clear();
  tick();
  std::erase_if(checker_.tasks_, [this](const std::unique_ptr<TaskRaces>& t) { return t->parent_ == this; });
}

TaskRaces* RaceChecker::start_root(const BlockState& block) {
  auto task = std::make_unique<TaskRaces>(*this, new_slot(), block, nullptr, nullptr);
  task->tick();
  tasks_.push_back(std::move(task));
  return tasks_.back().get();
}

int RaceChecker::new_slot() {
  slots_.emplace_back();
  return static_cast<int>(slots_.size() - 1);
}

std::vector<RaceChecker::ElementShadow>& RaceChecker::shadow(const Tile& tile) {
  if (cached_tile_ != &tile) {
    std::vector<ElementShadow>& s = shadows_[&tile];
    if (s.empty()) s.resize(static_cast<size_t>(tile.elements()));
    cached_tile_ = &tile;
    cached_shadow_ = &s;
  }
  return *cached_shadow_;
}

RaceChecker::Access RaceChecker::access_of(const TaskRaces& task, int64_t lane, const Stmt* site) {
  SlotState& slot = slots_[static_cast<size_t>(task.slot_)];
  Access a;
  a.slot = task.slot_;
  a.lane = lane;
  a.clock = component(task.clock_, task.slot_);
  a.epoch = slot.epoch;
  if (lane >= 0) {
    size_t subgroup = subgroup_of(lane);
    if (slot.subgroup_epochs.size() <= subgroup) slot.subgroup_epochs.resize(subgroup + 1, 0);
    a.subgroup_epoch = slot.subgroup_epochs[subgroup];
  }
  a.site = site;
  a.role = task.role_;
  return a;
}

bool RaceChecker::ordered(const Access& earlier, const Access& later, const TaskRaces& task) const {
  if (earlier.slot != later.slot) return component(task.clock_, earlier.slot) >= earlier.clock;
  // The same task: program order, except between different threads in thread-level code.
  if (earlier.lane == kGroupLane || later.lane == kGroupLane || earlier.lane == later.lane) return true;
  if (later.epoch > earlier.epoch) return true;
  return subgroup_of(earlier.lane) == subgroup_of(later.lane) && later.subgroup_epoch > earlier.subgroup_epoch;
}

namespace {

// "write by copy_async at line 14 (role producer)", "read by assign at line 6 (thread 3)"
std::string describe(const std::string* role, int64_t lane, const Stmt* site, bool writes) {
  std::string out = absl::StrCat(writes ? "write" : "read", " by ",
                                 site != nullptr ? av(stmt_op_name(*site)) : absl::string_view("?"));
  if (site != nullptr && site->loc.line != 0) absl::StrAppend(&out, " at line ", site->loc.line);
  std::vector<std::string> who;
  if (role != nullptr) who.push_back(absl::StrCat("role ", *role));
  if (lane >= 0) who.push_back(absl::StrCat("thread ", lane));
  if (who.empty()) who.push_back("block");
  absl::StrAppend(&out, " (", absl::StrJoin(who, ", "), ")");
  return out;
}

// "As[1, 3, 17]" for element `offset` of `tile`.
std::string element_name(const Tile& tile, int64_t offset) {
  const std::vector<int64_t>& shape = tile.shape();
  if (shape.empty()) return tile.name();
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? offset % shape[d] : 0;
    offset = shape[d] > 0 ? offset / shape[d] : 0;
  }
  return absl::StrCat(tile.name(), "[", absl::StrJoin(index, ", "), "]");
}

}  // namespace

void RaceChecker::report(const TaskRaces& task, const Tile& tile, int64_t offset, const Access& earlier,
                         bool earlier_writes, const Access& later, bool later_writes) {
  const int64_t* b = task.block_.index;
  // DataLoss: a race is an execution fault of the kernel (TILERT_ERROR_EXECUTION), told apart
  // from deadlocks (Aborted) and out-of-bounds accesses (OutOfRange).
  first_race_ = absl::DataLossError(absl::StrCat(
      "race in kernel ", kernel_name_, " block (", b[0], ",", b[1], ",", b[2], ") on ", element_name(tile, offset),
      ": ", describe(earlier.role, earlier.lane, earlier.site, earlier_writes), " and ",
      describe(later.role, later.lane, later.site, later_writes), " are not ordered by any barrier"));
}

}  // namespace tilert::cpu
