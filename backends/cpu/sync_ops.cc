#include "backends/cpu/sync_ops.h"

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::cpu {
namespace {

// Named barrier ids a block has (as on NVIDIA hardware).
constexpr int64_t kNamedBarriers = 16;

// Times one sync op of the task for the sync profile (sync_trace.h); does nothing unless the
// task's lane records.
class SyncTiming {
 public:
  explicit SyncTiming(TaskExecutor& ex) : lane_(ex.trace_lane()), start_(lane_ != nullptr ? lane_->now_ns() : 0) {}
  bool on() const { return lane_ != nullptr; }
  void done(SyncEventKind kind, std::string name, const ActiveThreads& threads) {
    if (lane_ != nullptr) lane_->record(kind, std::move(name), start_, threads.count());
  }

 private:
  SyncLane* lane_;
  int64_t start_;
};

// Waits until `ready`; `what` ("barrier at line 5") and `state` describe the wait in a deadlock
// report.
absl::Status wait_for(TaskExecutor& ex, std::function<bool()> ready, std::string what,
                      std::function<std::string()> state) {
  return ex.scheduler().wait_until(ex.task(), std::move(ready), [what = std::move(what), state = std::move(state)] {
    return absl::StrCat(what, " (", state(), ")");
  });
}

absl::Status arrive_and_wait(TaskExecutor& ex, ThreadBarrier& barrier, const ActiveThreads& group,
                             int64_t expected, bool wait, std::string what) {
  SyncTiming timing(ex);
  uint64_t phase = 0;
  std::string bad = barrier.arrive(group.count(), expected, &phase);
  if (!bad.empty()) return ex.error(bad);
  if (ex.races() != nullptr) ex.races()->barrier_arrive(barrier, phase, wait);
  if (!wait) {
    timing.done(SyncEventKind::kArrive, std::move(what), group);
    return absl::OkStatus();
  }
  std::string traced = timing.on() ? what : std::string();
  RETURN_IF_ERROR(wait_for(ex, [&barrier, phase] { return barrier.passed(phase); }, std::move(what),
                           [&barrier] { return barrier.describe(); }));
  timing.done(SyncEventKind::kWait, std::move(traced), group);
  if (ex.races() != nullptr) ex.races()->barrier_passed(barrier, phase);
  return absl::OkStatus();
}

}  // namespace

absl::Status exec_barrier(TaskExecutor& ex, const ActiveThreads& threads) {
  BlockState& block = ex.block();
  return arrive_and_wait(ex, block.barrier, threads, block.threads, true,
                         absl::StrCat("barrier", ex.at_line()));
}

absl::Status exec_named_barrier(TaskExecutor& ex, const NamedBarrierOp& op, const ActiveThreads& threads) {
  int64_t id, count;
  RETURN_IF_ERROR(ex.eval_uniform_int(op.id, threads, "barrier id", &id));
  RETURN_IF_ERROR(ex.eval_uniform_int(op.thread_count, threads, "thread count", &count));
  if (id < 0 || id >= kNamedBarriers)
    return ex.error(absl::StrCat("named barrier id ", id, " is outside 0..", kNamedBarriers - 1));
  if (count < 1 || count > ex.block().threads)
    return ex.error(absl::StrCat("thread count ", count, " is outside 1..", ex.block().threads));
  return arrive_and_wait(ex, ex.block().named_barriers[id], threads, count, op.wait,
                         absl::StrCat("named barrier ", id, ex.at_line()));
}

absl::Status exec_cluster_sync(TaskExecutor& ex, const ActiveThreads& threads) {
  ClusterState& cluster = *ex.block().cluster;
  return arrive_and_wait(ex, cluster.barrier, threads, cluster.threads, true,
                         absl::StrCat("cluster_sync", ex.at_line()));
}

absl::Status resolve_mbarrier(TaskExecutor& ex, const MbarrierRef& ref, const ActiveThreads& threads,
                              Mbarrier** out, std::string* label) {
  const Kernel& k = ex.kernel();
  if (ref.barrier >= k.symbols.size() || k.symbols[ref.barrier].kind != SymbolKind::kMbarrier)
    return ex.error(absl::StrCat("symbol #", ref.barrier, " is not an mbarrier"));
  const Symbol& s = k.symbols[ref.barrier];
  std::vector<Mbarrier>& array = ex.block().mbarriers[ref.barrier];
  if (array.empty()) return ex.error(absl::StrCat("mbarrier ", s.name, " is used before its declaration ran"));
  int64_t index;
  RETURN_IF_ERROR(ex.eval_uniform_int(ref.index, threads, "mbarrier index", &index));
  if (index < 0 || index >= static_cast<int64_t>(array.size()))
    return ex.error(out_of_bounds_message(s.name, 0, index, static_cast<int64_t>(array.size())));
  *out = &array[static_cast<size_t>(index)];
  *label = absl::StrCat(s.name, "[", index, "]");
  return absl::OkStatus();
}

absl::Status exec_arrive(TaskExecutor& ex, const MbarrierArriveOp& op, const ActiveThreads& threads) {
  SyncTiming timing(ex);
  Mbarrier* barrier;
  std::string label;
  RETURN_IF_ERROR(resolve_mbarrier(ex, op.barrier, threads, &barrier, &label));
  int64_t phases_before = barrier->completed_phases();
  std::string bad = barrier->arrive(threads.count());
  if (bad.empty() && ex.races() != nullptr) ex.races()->mbarrier_release(*barrier, phases_before);
  if (bad.empty() && timing.on())
    timing.done(SyncEventKind::kArrive, absl::StrCat("arrive ", label, ex.at_line()), threads);
  return bad.empty() ? absl::OkStatus() : ex.error(absl::StrCat("mbarrier ", label, ": ", bad));
}

absl::Status exec_expect_tx(TaskExecutor& ex, const MbarrierExpectTxOp& op, const ActiveThreads& threads) {
  SyncTiming timing(ex);
  Mbarrier* barrier;
  std::string label;
  RETURN_IF_ERROR(resolve_mbarrier(ex, op.barrier, threads, &barrier, &label));
  int64_t bytes;
  RETURN_IF_ERROR(ex.eval_uniform_int(op.bytes, threads, "byte count", &bytes));
  if (bytes < 0) return ex.error(absl::StrCat("mbarrier ", label, ": negative byte count ", bytes));
  // Once for the group: one elected thread expects the bytes and arrives.
  int64_t phases_before = barrier->completed_phases();
  std::string bad = barrier->expect_bytes_and_arrive(bytes);
  if (bad.empty() && ex.races() != nullptr) ex.races()->mbarrier_release(*barrier, phases_before);
  if (bad.empty() && timing.on())
    timing.done(SyncEventKind::kArrive, absl::StrCat("arrive_expect_tx ", label, " bytes ", bytes, ex.at_line()),
                threads);
  return bad.empty() ? absl::OkStatus() : ex.error(absl::StrCat("mbarrier ", label, ": ", bad));
}

absl::Status exec_wait(TaskExecutor& ex, const MbarrierWaitOp& op, const ActiveThreads& threads) {
  SyncTiming timing(ex);
  Mbarrier* barrier;
  std::string label;
  RETURN_IF_ERROR(resolve_mbarrier(ex, op.barrier, threads, &barrier, &label));
  int64_t parity;
  RETURN_IF_ERROR(ex.eval_uniform_int(op.parity, threads, "parity", &parity));
  if (parity != 0 && parity != 1) return ex.error(absl::StrCat("parity ", parity, " is neither 0 nor 1"));
  // A redeclaration can replace the barrier array while this task waits: look it up each time.
  std::vector<Mbarrier>* array = &ex.block().mbarriers[op.barrier.barrier];
  size_t index = static_cast<size_t>(barrier - array->data());
  auto current = [array, index]() -> const Mbarrier* {
    return index < array->size() ? &(*array)[index] : nullptr;
  };
  std::string what = absl::StrCat("mbarrier ", label, " parity ", parity, ex.at_line());
  std::string traced = timing.on() ? what : std::string();
  RETURN_IF_ERROR(wait_for(
      ex, [current, parity] { return current() == nullptr || current()->passed(parity); }, std::move(what),
      [current] { return current() != nullptr ? current()->describe() : std::string("redeclared"); }));
  timing.done(SyncEventKind::kWait, std::move(traced), threads);
  if (ex.races() != nullptr && current() != nullptr) ex.races()->mbarrier_passed(*current());
  return absl::OkStatus();
}

}  // namespace tilert::cpu
