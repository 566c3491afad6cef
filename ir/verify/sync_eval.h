// Concrete integer evaluation for the synchronization executor: scalar parameters at their
// defaults, loop variables at their current values, and tx for one thread at a time. Anything
// else (block indices, loaded data, floats, a parameter without a default) has no value.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/kernel.h"

namespace tilert {

class SyncEvaluator {
 public:
  explicit SyncEvaluator(const Kernel& kernel);

  // `loop_values`: the current value of each live loop variable; `tx`: the thread, if one.
  std::optional<int64_t> eval(const Expr& e, const absl::flat_hash_map<SymbolId, int64_t>& loop_values,
                              std::optional<int64_t> tx) const;

  // The smallest and largest value of `e` over `threads` (one evaluation when it does not read
  // tx); nullopt when some value is unknown. Adds the evaluations made to *work.
  std::optional<std::pair<int64_t, int64_t>> range_over(
      const Expr& e, const absl::flat_hash_map<SymbolId, int64_t>& loop_values,
      const std::vector<int32_t>& threads, int64_t* work) const;

  static bool reads_tx(const Expr& e);

 private:
  const Kernel& kernel_;
  std::vector<std::optional<int64_t>> param_values_;  // by parameter index
};

}  // namespace tilert
