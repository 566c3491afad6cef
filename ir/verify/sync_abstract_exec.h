// Abstract execution of a kernel's synchronization skeleton, for the static sync rules
// (sync_protocol.cc). One block is executed with the scalar parameters at their defaults: control
// flow with concrete loop trip counts, mbarrier / named / block barriers with the phase semantics
// of ir/kernel.h, and the shared-memory accesses of every op. Each role of a role group is a task
// (a kernel without roles is one task); tasks run until all finish or all wait forever.
// Anything the executor cannot evaluate exactly (a parameter without a default, a condition on
// loaded data around a barrier, a data-dependent bound) makes it give up: no guesses, no false
// reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/verify/shared_access_log.h"

namespace tilert {

// What one mbarrier of an array looks like at the end.
struct MbarrierSnapshot {
  SymbolId symbol = kNoSymbol;
  int64_t index = 0;
  int64_t phase = 0;
  int64_t arrivals = 0;          // the count each phase expects
  int64_t pending_arrivals = 0;  // still missing in the current phase
  int64_t pending_bytes = 0;
};

// A task that waits forever.
struct BlockedTask {
  size_t task = 0;
  const Stmt* wait = nullptr;  // the wait / named_barrier / barrier statement
  bool on_mbarrier = false;
  MbarrierSnapshot mbarrier;   // on_mbarrier
  int64_t parity = 0;          // on_mbarrier
  int64_t named_id = 0;        // otherwise: the named barrier's id (-1: block barrier)
  int64_t named_arrived = 0, named_expected = 0;
};

// An arrival the barrier's current phase has no room for: all its arrivals are in and it waits
// only for bytes.
struct ArrivalOvershoot {
  size_t task = 0;
  const Stmt* stmt = nullptr;
  MbarrierSnapshot mbarrier;  // before the arrivals
  int64_t arrivals_made = 0;  // by this op
};

// Per mbarrier symbol, the arrive / arrive_expect_tx statements executed on it and the most
// arrivals one execution of each made.
struct ArrivalSource {
  size_t task = 0;
  const Stmt* stmt = nullptr;
  int64_t arrivals = 0;
};

struct SyncExecution {
  enum class Result { kSkipped, kCompleted, kDeadlock, kOvershoot };
  Result result = Result::kSkipped;
  std::vector<std::string> task_names;   // "role producer", or "the block" for the kernel itself
  std::vector<BlockedTask> blocked;       // kDeadlock: every waiting task, in task order
  std::optional<ArrivalOvershoot> overshoot;  // kOvershoot
  std::vector<std::vector<ArrivalSource>> arrival_sources;  // indexed by mbarrier symbol
  // Mbarrier symbols each task arrives at anywhere in its body (arrive, expect_tx, copy_async).
  std::vector<std::vector<SymbolId>> task_arrives_on;
  std::optional<SharedRace> race;         // the first unordered pair, if any (any result but skipped)
};

// Total statements executed before the executor gives up on a kernel.
inline constexpr int64_t kMaxAbstractSteps = 1000000;

SyncExecution execute_sync_skeleton(const Kernel& kernel, int64_t max_steps = kMaxAbstractSteps);

}  // namespace tilert
