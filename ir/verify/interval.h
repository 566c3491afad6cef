// Integer value ranges the verifier can prove without running a kernel: constants, loop and parallel
// variables with known bounds, tx within the block (or its role), and what index arithmetic makes of
// them (`k % 2` is in [0, 1] for k >= 0). Bounds and mbarrier rules report only a finite end of an
// *exact* range: one whose ends some execution reaching the statement really takes. A hull such as
// tx + 4 under `if tx % 8 < 4` is sound but not exact (tx = 63 never gets there), and reporting it
// would be a false positive; an infinite end ("unknown") is never reported either.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "ir/kernel.h"

namespace tilert {

struct Interval {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  // Inclusive ends; an infinite end means "not known on that side". Doubles hold every index a
  // tile can have exactly and make infinities free.
  double lo = -kInf;
  double hi = kInf;
  bool exact = false;  // the finite ends are attained (where the enclosing loops run at all)
  bool dense = false;  // every integer between the ends is attained (k, tx + 1; not 2 * k)

  static Interval point(int64_t v) {
    return {static_cast<double>(v), static_cast<double>(v), true, true};
  }
  // A variable that runs through every value of [lo, hi].
  static Interval all_of(double lo, double hi) { return {lo, hi, true, true}; }
  static Interval unknown() { return {}; }
  bool is_point() const { return lo == hi; }
  bool empty() const { return lo > hi; }
  // Provably leaves [min, max]: the range is exact and one of its finite ends lies outside.
  bool exceeds(double min, double max) const {
    return exact && ((lo != -kInf && lo < min) || (hi != kInf && hi > max));
  }
  // "2" or "[0, 3]" (an infinite end prints as -inf / inf).
  std::string to_string() const;
};

class IntervalEnv {
 public:
  explicit IntervalEnv(const Kernel& kernel);

  Interval of(const Expr& e) const;
  void set_symbol(SymbolId id, Interval range) { symbols_[id] = range; }
  void set_thread_range(Interval range) { thread_ = range; }

  // The environment inside the branch of `if condition` that is `taken` (then) or not (else).
  // Comparisons of a loop variable or tx with a bounded value narrow it.
  IntervalEnv narrowed(const Expr& condition, bool taken) const;
  // False when narrowing proved the branch can never run.
  bool reachable() const { return reachable_; }

 private:
  Interval* narrowable(const Expr& e);
  void narrow(const Expr& condition, bool taken);
  void narrow_comparison(const Expr& comparison, BinaryOp op);
  void mark_inexact(const Expr& condition);

  const Kernel* kernel_;
  absl::flat_hash_map<SymbolId, Interval> symbols_;
  Interval thread_;
  bool reachable_ = true;
};

// Calls `fn(stmt, env)` for every statement of the kernel, parents first, with the ranges that hold
// where the statement runs. Bodies of loops, branches and parallel loops that provably never run
// are skipped: nothing there can go wrong.
void walk_with_intervals(const Kernel& kernel,
                         const std::function<void(const Stmt&, const IntervalEnv&)>& fn);

}  // namespace tilert
