// Barrier divergence: block-wide barriers (barrier, named_barrier, named_arrive, cluster_sync) and
// collective tile ops (copy, copy_async, gemm, fill, reduce, parallel) must be reached by every
// thread of the group together. Under an if or loop whose condition or bounds depend on the thread
// (see thread_dependence.h) some threads skip them: a hang on a GPU, a deadlock on the CPU
// reference. Subgroup barriers and mbarrier operations are per-thread or elected, so they may
// appear there. A role body is not divergent by itself: each role is a uniform group.
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"
#include "ir/verify/thread_dependence.h"

namespace tilert {
namespace {

bool is_block_barrier(const Stmt& s) {
  return s.as<BarrierOp>() || s.as<NamedBarrierOp>() || s.as<ClusterSyncOp>();
}
bool is_collective(const Stmt& s) {
  return s.as<CopyOp>() || s.as<CopyAsyncOp>() || s.as<GemmOp>() || s.as<FillOp>() ||
         s.as<ReduceOp>() || s.as<ParallelOp>();
}

class DivergenceChecker {
 public:
  DivergenceChecker(VerifyContext& ctx, const ThreadDependence& dependence)
      : ctx_(ctx), dependence_(dependence) {}

  // `cause`: the outermost thread-dependent if/loop around `block`, or null.
  void check_block(const Block& block, const Stmt* cause) {
    for (const Stmt& s : block) {
      if (cause && (is_block_barrier(s) || is_collective(s))) {
        ctx_.report(is_block_barrier(s) ? "barrier-divergence" : "collective-divergence", s,
                    absl::StrCat(av(safe_op_name(s)),
                                 " inside control flow that depends on the thread index (",
                                 ctx_.describe(*cause), ")"));
      }
      // Parallel bodies hold no barriers or tile ops (parallel.cc); their iterations are not
      // thread-uniform, so nothing inside them is checked here.
      if (s.as<ParallelOp>()) continue;
      const Stmt* inner = cause ? cause : (dependence_.makes_divergent(s) ? &s : nullptr);
      for (const Block* b : child_blocks(s)) check_block(*b, inner);
    }
  }

 private:
  VerifyContext& ctx_;
  const ThreadDependence& dependence_;
};

}  // namespace

void verify_divergence(VerifyContext& ctx) {
  ThreadDependence dependence(ctx.kernel());
  DivergenceChecker(ctx, dependence).check_block(ctx.kernel().body, nullptr);
}

}  // namespace tilert
