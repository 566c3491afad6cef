#include "backends/cpu/sync.h"

#include "absl/strings/str_cat.h"

namespace tilert::cpu {

std::string Mbarrier::arrive(int64_t threads) {
  // Arrivals are counted one by one, as hardware does: a phase that completes mid-way lets the
  // remaining arrivals count toward the next phase.
  for (int64_t t = 0; t < threads; ++t) {
    if (pending_arrivals_ == 0)
      return absl::StrCat("more arrivals than its count (", arrivals_, ") in phase ", phase_, " (",
                          pending_bytes_, " bytes still pending)");
    --pending_arrivals_;
    complete_if_done();
  }
  return {};
}

std::string Mbarrier::expect_bytes_and_arrive(int64_t bytes) {
  pending_bytes_ += bytes;
  return arrive(1);
}

void Mbarrier::complete_bytes(int64_t bytes) {
  pending_bytes_ -= bytes;
  complete_if_done();
}

void Mbarrier::complete_if_done() {
  if (pending_arrivals_ != 0 || pending_bytes_ != 0) return;
  ++phase_;
  pending_arrivals_ = arrivals_;
}

std::string Mbarrier::describe() const {
  return absl::StrCat("phase ", phase_, ": ", arrivals_ - pending_arrivals_, " of ", arrivals_, " arrivals, ",
                      pending_bytes_, " bytes pending");
}

std::string ThreadBarrier::arrive(int64_t threads, int64_t expected, uint64_t* phase) {
  if (arrived_ == 0) {
    expected_ = expected;
  } else if (expected != expected_) {
    return absl::StrCat("expects ", expected, " threads but the phase in progress expects ", expected_);
  }
  if (arrived_ + threads > expected_)
    return absl::StrCat(arrived_ + threads, " threads arrived but the barrier expects ", expected_);
  *phase = completed_;
  arrived_ += threads;
  if (arrived_ == expected_) {
    arrived_ = 0;
    ++completed_;
  }
  return {};
}

std::string ThreadBarrier::describe() const {
  return absl::StrCat(arrived_, " of ", expected_, " threads arrived");
}

}  // namespace tilert::cpu
