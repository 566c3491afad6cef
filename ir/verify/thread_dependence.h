// Which values may differ between the threads of a group: tx, parallel loop variables, and every
// local that is written from such a value or under control flow that depends on one (a flag set
// inside `if tx < 32` differs between threads even when the assigned value does not).
#pragma once

#include <vector>

#include "ir/kernel.h"

namespace tilert {

class ThreadDependence {
 public:
  // Runs the analysis to its fixed point over the whole kernel (a local written late in a loop
  // body can make a condition earlier in the body thread-dependent).
  explicit ThreadDependence(const Kernel& kernel);

  bool depends_on_thread(const Expr& e) const;
  // The statement's own condition or bounds depend on the thread, so its body is divergent.
  bool makes_divergent(const Stmt& s) const;

 private:
  bool propagate(const Block& block, bool divergent);
  bool mark(SymbolId id);

  const Kernel& kernel_;
  std::vector<bool> per_thread_;  // by SymbolId
};

}  // namespace tilert
