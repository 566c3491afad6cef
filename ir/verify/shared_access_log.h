// Happens-before bookkeeping for the static synchronization check: vector clocks per task and a
// log of shared-memory accesses that finds the first pair of accesses from different tasks, one a
// write, that touch overlapping memory without a barrier ordering them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/kernel.h"

namespace tilert {

// One counter per task; tasks are numbered from 0 in the order they start.
class VectorClock {
 public:
  uint64_t of(size_t task) const { return task < counters_.size() ? counters_[task] : 0; }
  void set(size_t task, uint64_t value);
  void join(const VectorClock& other);

 private:
  std::vector<uint64_t> counters_;
};

// The part of a shared buffer an access may touch: rows [first, last] of its leading dimension,
// or the whole buffer when the leading index could not be evaluated.
struct SharedSpan {
  SymbolId buffer = kNoSymbol;
  bool whole = true;
  int64_t first = 0, last = 0;
  bool overlaps(const SharedSpan& o) const {
    return buffer == o.buffer && (whole || o.whole || (first <= o.last && o.first <= last));
  }
};

struct SharedAccess {
  size_t task = 0;
  uint64_t epoch = 0;   // the task's own counter when it accessed
  VectorClock clock;    // everything the task had synchronized with by then
  const Stmt* stmt = nullptr;
  bool write = false;
  SharedSpan span;
};

struct SharedRace {
  SharedAccess earlier, later;
};

class SharedAccessLog {
 public:
  // Records the access; the first race it forms with a logged access is kept (see race()).
  void record(SharedAccess access);
  const std::optional<SharedRace>& race() const { return race_; }

 private:
  // Per buffer, the latest access of each (task, write, span) kind: an earlier access of the same
  // task happens before the latest one, so it cannot race where the latest one does not.
  absl::flat_hash_map<SymbolId, std::vector<SharedAccess>> latest_;
  std::optional<SharedRace> race_;
};

}  // namespace tilert
