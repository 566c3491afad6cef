// Synchronization objects of one block or cluster. They hold counts only; waiting is the
// scheduler's job (backends/cpu/scheduler.h), which asks them whether a wait may return.
#pragma once

#include <cstdint>
#include <string>

namespace tilert::cpu {

// An mbarrier (ir/kernel.h): a phase completes when its pending arrivals and pending transaction
// bytes are both zero; then the parity flips and the arrival count resets.
class Mbarrier {
 public:
  explicit Mbarrier(int64_t arrivals) : arrivals_(arrivals), pending_arrivals_(arrivals) {}

  // One arrival per thread. Returns an error message (empty: fine) when a phase gets more
  // arrivals than its count (possible only while bytes are still pending).
  std::string arrive(int64_t threads);
  // arrive_expect_tx: adds `bytes` to the pending transaction count, then arrives once.
  std::string expect_bytes_and_arrive(int64_t bytes);
  // The completion of an async copy that wrote `bytes`.
  void complete_bytes(int64_t bytes);

  int parity() const { return static_cast<int>(phase_ & 1); }
  int64_t completed_phases() const { return phase_; }  // for the race checker (race_check.h)
  // wait(parity p) returns once the phase with parity p has completed.
  bool passed(int64_t p) const { return parity() != p; }
  // "phase 0: 0 of 128 arrivals, 0 bytes pending"
  std::string describe() const;

 private:
  void complete_if_done();

  int64_t arrivals_;
  int64_t pending_arrivals_;
  int64_t pending_bytes_ = 0;
  int64_t phase_ = 0;  // completed phases
};

// A barrier over a number of threads, reused phase after phase: the block barrier, a named
// barrier, the cluster barrier.
class ThreadBarrier {
 public:
  // Adds `threads` arrivals to the phase in progress, which completes once `expected` threads
  // have arrived. Writes the phase the arrival belongs to; returns an error message (empty: fine)
  // when the expected count disagrees with the phase's or too many threads arrive.
  std::string arrive(int64_t threads, int64_t expected, uint64_t* phase);
  bool passed(uint64_t phase) const { return completed_ > phase; }
  // "64 of 128 threads arrived"
  std::string describe() const;

 private:
  int64_t arrived_ = 0;
  int64_t expected_ = 0;
  uint64_t completed_ = 0;  // completed phases; the phase in progress is number `completed_`
};

}  // namespace tilert::cpu
