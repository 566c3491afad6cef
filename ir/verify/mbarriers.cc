// mbarrier protocol: what can be told without running the kernel. An index outside the array names
// a barrier that was never initialised; a phase needs at least one arrival; expect_tx announces a
// positive byte count; a wait parity is 0 or 1; and a barrier that is waited on but that nothing
// ever arrives at (arrive, arrive_expect_tx, or a copy_async completing on it) can only pass its
// first wait on parity 1 and then deadlocks, which is never what the author meant.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/interval.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

class MbarrierChecker {
 public:
  explicit MbarrierChecker(VerifyContext& ctx) : ctx_(ctx) {}

  void run() {
    visit_stmts(ctx_.kernel().body, [&](const Stmt& s) { collect(s); });
    walk_with_intervals(ctx_.kernel(), [&](const Stmt& s, const IntervalEnv& env) {
      check_index(s, env);
      check_operands(s, env);
    });
    report_unarrived_waits();
  }

 private:
  void collect(const Stmt& s) {
    if (auto* d = s.as<DeclareOp>(); d && ctx_.symbol(d->symbol).kind == SymbolKind::kMbarrier) {
      const Symbol& b = ctx_.symbol(d->symbol);
      if (b.arrivals < 1)
        ctx_.report("mbarrier-arrivals", s, absl::StrCat("mbarrier ", b.name, " expects ", b.arrivals,
                                                         " arrivals per phase; it needs at least 1"));
    }
    if (s.as<MbarrierArriveOp>() || s.as<MbarrierExpectTxOp>() || s.as<CopyAsyncOp>())
      arrived_.insert(stmt_mbarrier(s)->barrier);
    if (auto* w = s.as<MbarrierWaitOp>()) first_wait_.try_emplace(w->barrier.barrier, &s);
  }

  static int64_t array_length(const Symbol& b) {
    if (b.shape.empty()) return 1;
    return *const_int_value(b.shape[0]);
  }

  void check_index(const Stmt& s, const IntervalEnv& env) {
    const MbarrierRef* ref = stmt_mbarrier(s);
    if (!ref) return;
    const Symbol& b = ctx_.symbol(ref->barrier);
    int64_t length = array_length(b);
    Interval index = env.of(ref->index);
    if (index.exceeds(0, static_cast<double>(length - 1)))
      ctx_.report("mbarrier-index", s, absl::StrCat("index ", index.to_string(), " out of bounds of ",
                                                    b.name, " (size ", length,
                                                    "): that mbarrier is never initialised"));
  }

  void check_operands(const Stmt& s, const IntervalEnv& env) {
    if (auto* x = s.as<MbarrierExpectTxOp>()) {
      auto bytes = const_int_value(x->bytes);
      if (bytes && *bytes <= 0)
        ctx_.report("mbarrier-expect-tx", s, absl::StrCat("arrive_expect_tx on ", ctx_.symbol(x->barrier.barrier).name,
                                                          " announces ", *bytes,
                                                          " bytes; it must announce at least 1"));
    }
    if (auto* w = s.as<MbarrierWaitOp>()) {
      Interval parity = env.of(w->parity);
      if (parity.exceeds(0, 1))
        ctx_.report("mbarrier-parity", s, absl::StrCat("parity ", parity.to_string(), " of wait on ",
                                                       ctx_.symbol(w->barrier.barrier).name,
                                                       " must be 0 or 1"));
    }
  }

  void report_unarrived_waits() {
    // Report in program order so diagnostics are deterministic.
    visit_stmts(ctx_.kernel().body, [&](const Stmt& s) {
      auto* w = s.as<MbarrierWaitOp>();
      if (!w || arrived_.contains(w->barrier.barrier) || first_wait_[w->barrier.barrier] != &s) return;
      ctx_.report("mbarrier-never-arrived", s,
                  absl::StrCat("wait on mbarrier ", ctx_.symbol(w->barrier.barrier).name,
                               " which no statement arrives at (no arrive, arrive_expect_tx or "
                               "copy_async complete(...) on it)"));
    });
  }

  VerifyContext& ctx_;
  absl::flat_hash_set<SymbolId> arrived_;
  absl::flat_hash_map<SymbolId, const Stmt*> first_wait_;
};

}  // namespace

void verify_mbarriers(VerifyContext& ctx) { MbarrierChecker(ctx).run(); }

}  // namespace tilert
