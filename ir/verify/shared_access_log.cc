#include "ir/verify/shared_access_log.h"

#include <algorithm>

namespace tilert {

void VectorClock::set(size_t task, uint64_t value) {
  if (task >= counters_.size()) counters_.resize(task + 1, 0);
  counters_[task] = value;
}

void VectorClock::join(const VectorClock& other) {
  if (other.counters_.size() > counters_.size()) counters_.resize(other.counters_.size(), 0);
  for (size_t i = 0; i < other.counters_.size(); ++i)
    counters_[i] = std::max(counters_[i], other.counters_[i]);
}

namespace {

bool same_kind(const SharedAccess& a, const SharedAccess& b) {
  return a.task == b.task && a.write == b.write && a.span.whole == b.span.whole &&
         a.span.first == b.span.first && a.span.last == b.span.last;
}

}  // namespace

void SharedAccessLog::record(SharedAccess access) {
  std::vector<SharedAccess>& logged = latest_[access.span.buffer];
  if (!race_) {
    for (const SharedAccess& old : logged) {
      if (old.task == access.task || !(old.write || access.write)) continue;
      if (!old.span.overlaps(access.span)) continue;
      if (old.epoch <= access.clock.of(old.task)) continue;  // ordered by a barrier
      race_ = SharedRace{old, access};
      break;
    }
  }
  for (SharedAccess& old : logged) {
    if (same_kind(old, access)) {
      old = std::move(access);
      return;
    }
  }
  logged.push_back(std::move(access));
}

}  // namespace tilert
