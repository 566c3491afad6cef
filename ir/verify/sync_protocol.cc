// Static synchronization protocol: executes the kernel's synchronization skeleton
// (sync_abstract_exec.h) with the scalar parameters at their defaults and reports what would hang
// or race on the GPU, before anything runs:
//   mbarrier-deadlock       every task waits forever (an unsatisfiable wait, or a producer/consumer
//                           stage cycle)
//   mbarrier-arrival-count  the arrivals a phase receives can never match the barrier's count
//   shared-race             two roles touch overlapping shared memory, one writing, unordered
// Kernels the executor cannot evaluate exactly are skipped: these rules never guess.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"
#include "ir/verify/rules.h"
#include "ir/verify/sync_abstract_exec.h"

namespace tilert {
namespace {

class SyncProtocolReporter {
 public:
  SyncProtocolReporter(VerifyContext& ctx, const SyncExecution& ex) : ctx_(ctx), ex_(ex) {}

  void report() {
    if (ex_.result == SyncExecution::Result::kOvershoot) report_overshoot(*ex_.overshoot);
    if (ex_.result == SyncExecution::Result::kDeadlock) report_deadlock();
    if (ex_.race) report_race(*ex_.race);
  }

 private:
  std::string where(const Stmt& s) const {
    if (s.loc.line != 0) return absl::StrCat("at line ", s.loc.line);
    return absl::StrCat("at op #", ctx_.op_index(s));
  }

  std::string barrier_name(const MbarrierSnapshot& b) const {
    return absl::StrCat(ctx_.symbol_name(b.symbol), "[", b.index, "]");
  }

  std::string phase_state(const MbarrierSnapshot& b) const {
    return absl::StrCat("phase ", b.phase, ": ", b.arrivals - b.pending_arrivals, " of ", b.arrivals,
                        " arrivals, ", b.pending_bytes, " bytes pending");
  }

  std::string describe_wait(const BlockedTask& b) const {
    const std::string& task = ex_.task_names[b.task];
    if (b.on_mbarrier)
      return absl::StrCat(task, " waits on ", barrier_name(b.mbarrier), " parity ", b.parity, " ",
                          where(*b.wait), " (", phase_state(b.mbarrier), ")");
    return absl::StrCat(task, " waits on named barrier ", b.named_id, " ", where(*b.wait), " (",
                        b.named_arrived, " of ", b.named_expected, " threads arrived)");
  }

  bool task_arrives_on(size_t task, SymbolId barrier) const {
    for (SymbolId b : ex_.task_arrives_on[task])
      if (b == barrier) return true;
    return false;
  }

  // Blocked tasks in a cycle of "waits on a barrier only the next one arrives at", or empty.
  std::vector<const BlockedTask*> find_cycle() const {
    auto next_of = [&](const BlockedTask* from) -> const BlockedTask* {
      if (!from->on_mbarrier) return nullptr;
      for (const BlockedTask& other : ex_.blocked)
        if (other.task != from->task && task_arrives_on(other.task, from->mbarrier.symbol)) return &other;
      return nullptr;
    };
    for (const BlockedTask& start : ex_.blocked) {
      std::vector<const BlockedTask*> path;
      for (const BlockedTask* at = &start; at; at = next_of(at)) {
        auto seen = std::find(path.begin(), path.end(), at);
        if (seen != path.end()) {
          std::vector<const BlockedTask*> cycle(seen, path.end());
          if (cycle.size() >= 2) return cycle;
          break;
        }
        path.push_back(at);
      }
    }
    return {};
  }

  // A blocked wait on a barrier whose arrivers make fewer arrivals per phase than it expects
  // (each arrive statement counted once per phase): the count itself is the bug.
  bool report_short_arrivals() {
    for (const BlockedTask& b : ex_.blocked) {
      if (!b.on_mbarrier) continue;
      const std::vector<ArrivalSource>& sources = ex_.arrival_sources[b.mbarrier.symbol];
      int64_t most = 0;
      std::vector<std::string> parts;
      for (const ArrivalSource& a : sources) {
        most += a.arrivals;
        parts.push_back(absl::StrCat(ex_.task_names[a.task], ": ", a.arrivals, " ", where(*a.stmt)));
      }
      if (sources.empty() || most >= b.mbarrier.arrivals) continue;
      ctx_.report("mbarrier-arrival-count", *b.wait,
                  absl::StrCat("arrival count mismatch: ", ctx_.symbol_name(b.mbarrier.symbol), " expects ",
                               b.mbarrier.arrivals, " arrivals per phase but its arrivals add up to at most ",
                               most, " (", absl::StrJoin(parts, ", "), "), so ", describe_wait(b),
                               " forever"));
      return true;
    }
    return false;
  }

  void report_deadlock() {
    if (ex_.blocked.empty()) return;
    // A barrier nothing arrives at is mbarrier-never-arrived's finding already; a phase stuck on
    // transaction bytes is left to the run-time check (expect_tx sizes against copy sizes).
    for (const BlockedTask& b : ex_.blocked) {
      if (!b.on_mbarrier) continue;
      if (b.mbarrier.pending_bytes != 0) return;
      bool anyone = false;
      for (size_t t = 0; t < ex_.task_arrives_on.size(); ++t) anyone = anyone || task_arrives_on(t, b.mbarrier.symbol);
      if (!anyone) return;
    }
    if (report_short_arrivals()) return;
    std::vector<std::string> waits;
    for (const BlockedTask& b : ex_.blocked) waits.push_back(describe_wait(b));
    std::string states = absl::StrJoin(waits, " while ");
    std::vector<const BlockedTask*> cycle = find_cycle();
    if (cycle.empty()) {
      ctx_.report("mbarrier-deadlock", *ex_.blocked.front().wait,
                  absl::StrCat(states, "; nothing left to run can complete ",
                               ex_.blocked.size() == 1 ? "that wait" : "those waits"));
      return;
    }
    std::string chain = absl::StrCat(ex_.task_names[cycle[0]->task], " waits on ", barrier_name(cycle[0]->mbarrier));
    for (size_t i = 1; i <= cycle.size(); ++i) {
      const BlockedTask* b = cycle[i % cycle.size()];
      absl::StrAppend(&chain, " which ", ex_.task_names[b->task], " arrives at only after ",
                      barrier_name(b->mbarrier));
    }
    ctx_.report("mbarrier-deadlock", *cycle[0]->wait,
                absl::StrCat("producer/consumer stage cycle: ", chain, ": ", states));
  }

  void report_overshoot(const ArrivalOvershoot& o) {
    const MbarrierSnapshot& b = o.mbarrier;
    std::string message = absl::StrCat(
        "arrival count mismatch: ", ex_.task_names[o.task], " makes ", o.arrivals_made, " more arrival",
        o.arrivals_made == 1 ? "" : "s", " on ", barrier_name(b), " ", where(*o.stmt), " after phase ", b.phase,
        " already has all ", b.arrivals, " (", b.pending_bytes, " bytes still pending)");
    ctx_.report("mbarrier-arrival-count", *o.stmt, std::move(message));
  }

  std::string span_name(const SharedSpan& s) const {
    std::string name = ctx_.symbol_name(s.buffer);
    if (s.whole) return name;
    if (s.first == s.last) return absl::StrCat(name, "[", s.first, "]");
    return absl::StrCat(name, "[", s.first, "..", s.last, "]");
  }

  void report_race(const SharedRace& race) {
    const SharedSpan& span = race.earlier.span.whole ? race.later.span : race.earlier.span;
    auto side = [&](const SharedAccess& a) {
      return absl::StrCat(av(safe_op_name(*a.stmt)), " in ", ex_.task_names[a.task], " ", where(*a.stmt));
    };
    ctx_.report("shared-race", *race.later.stmt,
                absl::StrCat("shared-memory race on ", span_name(span), ": ", side(race.earlier), " and ",
                             side(race.later), " are not ordered by any barrier"));
  }

  VerifyContext& ctx_;
  const SyncExecution& ex_;
};

bool synchronizes(const Kernel& kernel) {
  bool found = false;
  visit_stmts(kernel.body, [&](const Stmt& s) {
    found = found || s.as<RoleOp>() || s.as<MbarrierWaitOp>() || s.as<MbarrierArriveOp>() ||
            s.as<MbarrierExpectTxOp>() || s.as<CopyAsyncOp>() || s.as<NamedBarrierOp>();
  });
  return found;
}

}  // namespace

void verify_sync_protocol(VerifyContext& ctx) {
  if (!synchronizes(ctx.kernel())) return;
  SyncExecution execution = execute_sync_skeleton(ctx.kernel());
  if (execution.result == SyncExecution::Result::kSkipped) return;
  SyncProtocolReporter(ctx, execution).report();
}

}  // namespace tilert
