// The placement walks each block once in program order with the set of accesses made since the
// last barrier ("pending"). A statement whose accesses conflict with a pending one gets a barrier
// right before it, which clears the set. Placing each barrier as late as possible is greedy
// interval stabbing by earliest right end, so straight-line code gets the fewest barriers.
//
// - Uniform if: both branches start from the pending set; afterwards it is their union.
// - Uniform loop: the body is walked again with what the previous iteration left pending (the
//   loop-carried accesses) until nothing changes, so one barrier covers every carried pair at
//   once (at the top of the body, or later where a carried pair allows). The carried set is first
//   found on a scratch copy, so the real walk knows it from the start. Pipelined loops are treated as serial: multi-buffering by the
//   lowerer renames stages and re-derives the barriers it needs.
// - Thread-dependent if/loop: no barrier may go inside, so the construct counts as one statement
//   (all its accesses); a barrier goes before it when needed. A conflict between two statements
//   inside it cannot be fixed by a block barrier and is an error.
// - Roles synchronize by hand (mbarriers, named barriers): a run of sibling roles counts as one
//   statement with all the accesses of its bodies, and nothing inside is changed.
//
// Hand-written barriers count like inserted ones. Each is tried without: if the kernel then needs
// no more inserted barriers than with it, it covers nothing another barrier does not, and it goes.
#include "ir/passes/insert_barriers.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/passes/access_sets.h"
#include "ir/status.h"
#include "ir/verify/thread_dependence.h"

namespace tilert {
namespace {

using AccessSet = std::vector<Access>;

void add_all(AccessSet& to, const AccessSet& from) {
  for (const Access& a : from)
    if (std::find(to.begin(), to.end(), a) == to.end()) to.push_back(a);
}

AccessSet joined(AccessSet a, const AccessSet& b) {
  add_all(a, b);
  return a;
}

// The first (pending, incoming) pair that conflicts, or null.
std::pair<const Access*, const Access*> find_conflict(const AccessSet& pending,
                                                      const AccessSet& incoming) {
  for (const Access& later : incoming)
    for (const Access& earlier : pending)
      if (accesses_conflict(earlier, later)) return {&earlier, &later};
  return {nullptr, nullptr};
}

bool is_sync_point(const Stmt& s) { return s.as<BarrierOp>() || s.as<ClusterSyncOp>(); }

class BarrierPlacer {
 public:
  BarrierPlacer(const Kernel& kernel, const ThreadDependence& dependence)
      : kernel_(kernel), dependence_(dependence) {}

  int inserted() const { return inserted_; }

  // Walks a block at uniform level, inserting barriers; returns what is pending at its end.
  absl::StatusOr<AccessSet> place(Block& block, AccessSet pending) {
    for (size_t i = 0; i < block.size(); ++i) {
      if (is_sync_point(block[i])) {
        pending.clear();
        continue;
      }
      if (block[i].as<RoleOp>()) {
        AccessSet roles;
        size_t end = i;
        for (; end < block.size() && block[end].as<RoleOp>(); ++end)
          visit_stmts(block[end].as<RoleOp>()->body,
                      [&](const Stmt& s) { add_all(roles, statement_accesses(kernel_, s)); });
        i = require(block, i, pending, roles) + (end - i) - 1;
        add_all(pending, roles);
        continue;
      }
      AccessSet own = statement_accesses(kernel_, block[i]);
      if (dependence_.makes_divergent(block[i])) {
        ASSIGN_OR_RETURN(AccessSet inside, check_divergent_stmt(block[i], own, block[i]));
        i = require(block, i, pending, inside);
        add_all(pending, inside);
        continue;
      }
      i = require(block, i, pending, own);
      add_all(pending, own);
      if (auto* f = block[i].as<ForOp>()) {
        // First learn what one iteration leaves pending for the next, on a scratch copy: walking
        // the body with the carried accesses known from the start keeps a barrier placed for the
        // entry accesses alone from being added beside one that covers them and the carried ones.
        Block scratch = f->body;
        BarrierPlacer dry_run(kernel_, dependence_);
        ASSIGN_OR_RETURN(AccessSet carried, dry_run.place_loop_body(scratch, pending, {}));
        ASSIGN_OR_RETURN(carried, place_loop_body(f->body, pending, std::move(carried)));
        add_all(pending, carried);  // zero trips leave `pending`; otherwise the last iteration's
      } else if (auto* s = block[i].as<IfOp>()) {
        ASSIGN_OR_RETURN(AccessSet then_out, place(s->then_body, pending));
        ASSIGN_OR_RETURN(AccessSet else_out, place(s->else_body, pending));
        pending = joined(std::move(then_out), else_out);
      }
    }
    return pending;
  }

 private:
  // Walks a loop body until what one iteration leaves pending stops growing and no more barriers
  // are needed; returns the accesses carried into the next iteration (and past the loop).
  absl::StatusOr<AccessSet> place_loop_body(Block& body, const AccessSet& entry,
                                            AccessSet carried) {
    for (;;) {
      int before = inserted_;
      ASSIGN_OR_RETURN(AccessSet out, place(body, joined(entry, carried)));
      size_t known = carried.size();
      add_all(carried, out);
      if (carried.size() == known && inserted_ == before) return carried;
    }
  }

  // Inserts a barrier before block[i] when `incoming` conflicts with `pending` (then clears it);
  // returns the statement's new index.
  size_t require(Block& block, size_t i, AccessSet& pending, const AccessSet& incoming) {
    if (!find_conflict(pending, incoming).first) return i;
    Stmt barrier{BarrierOp{}, block[i].loc};
    block.insert(block.begin() + static_cast<std::ptrdiff_t>(i), std::move(barrier));
    ++inserted_;
    pending.clear();
    return i + 1;
  }

  // All accesses of a statement under thread-dependent control flow `cause`, checking that no two
  // of its statements depend on each other (no block barrier could separate them).
  absl::StatusOr<AccessSet> check_divergent_stmt(const Stmt& s, AccessSet pending,
                                                 const Stmt& cause) {
    if (auto* f = s.as<ForOp>()) {
      AccessSet carried;
      for (;;) {
        ASSIGN_OR_RETURN(AccessSet out, check_divergent(f->body, joined(pending, carried), cause));
        size_t known = carried.size();
        add_all(carried, out);
        if (carried.size() == known) break;
      }
      return joined(std::move(pending), carried);
    }
    if (auto* i = s.as<IfOp>()) {
      ASSIGN_OR_RETURN(AccessSet then_out, check_divergent(i->then_body, pending, cause));
      ASSIGN_OR_RETURN(AccessSet else_out, check_divergent(i->else_body, pending, cause));
      return joined(std::move(then_out), else_out);
    }
    return pending;
  }

  absl::StatusOr<AccessSet> check_divergent(const Block& block, AccessSet pending,
                                            const Stmt& cause) {
    for (const Stmt& s : block) {
      AccessSet own = statement_accesses(kernel_, s);
      auto [earlier, later] = find_conflict(pending, own);
      if (earlier) {
        return absl::InvalidArgumentError(absl::StrCat(
            "kernel ", kernel_.name, ", line ", later->loc.line, ": ", av(later->op), " ",
            av(access_verb(*later)), " ", kernel_.symbol(later->buffer).name, ", which ",
            av(earlier->op), " at line ", earlier->loc.line, " ", av(access_verb(*earlier)),
            " in other threads; both run under thread-dependent control flow (",
            av(stmt_op_name(cause)), " at line ", cause.loc.line,
            "), where no block barrier can separate them"));
      }
      add_all(pending, own);
      if (s.as<ForOp>() || s.as<IfOp>()) {
        ASSIGN_OR_RETURN(pending, check_divergent_stmt(s, std::move(pending), cause));
      }
    }
    return pending;
  }

  const Kernel& kernel_;
  const ThreadDependence& dependence_;
  int inserted_ = 0;
};

// Paths (child indices from the kernel body) of the block barriers the pass may move: those at
// uniform level outside roles. A child index past a ForOp/IfOp/RoleOp's own index picks its body:
// then-body 0, else-body 1.
using StmtPath = std::vector<size_t>;

void collect_barriers(const Block& block, const ThreadDependence& dependence, StmtPath& prefix,
                      std::vector<StmtPath>& out) {
  for (size_t i = 0; i < block.size(); ++i) {
    const Stmt& s = block[i];
    prefix.push_back(i);
    if (s.as<BarrierOp>()) out.push_back(prefix);
    if (!dependence.makes_divergent(s)) {
      if (auto* f = s.as<ForOp>()) {
        prefix.push_back(0);
        collect_barriers(f->body, dependence, prefix, out);
        prefix.pop_back();
      } else if (auto* c = s.as<IfOp>()) {
        prefix.push_back(0);
        collect_barriers(c->then_body, dependence, prefix, out);
        prefix.back() = 1;
        collect_barriers(c->else_body, dependence, prefix, out);
        prefix.pop_back();
      }
    }
    prefix.pop_back();
  }
}

// The block holding the statement at `path` (all but the last index).
Block& block_at(Block& body, const StmtPath& path) {
  Block* block = &body;
  for (size_t d = 0; d + 1 < path.size(); d += 2) {
    Stmt& s = (*block)[path[d]];
    if (auto* f = s.as<ForOp>()) block = &f->body;
    else if (auto* c = s.as<IfOp>()) block = path[d + 1] == 0 ? &c->then_body : &c->else_body;
  }
  return *block;
}

absl::StatusOr<int> barriers_needed(const Kernel& kernel, const ThreadDependence& dependence) {
  Kernel copy = kernel;
  BarrierPlacer placer(copy, dependence);
  RETURN_IF_ERROR(placer.place(copy.body, {}).status());
  return placer.inserted();
}

}  // namespace

absl::StatusOr<BarrierReport> insert_barriers(Kernel& kernel) {
  ThreadDependence dependence(kernel);
  BarrierReport report;
  report.kernel = kernel.name;
  Kernel result = kernel;
  ASSIGN_OR_RETURN(int needed, barriers_needed(result, dependence));

  std::vector<StmtPath> hand;
  StmtPath prefix;
  collect_barriers(result.body, dependence, prefix, hand);
  // Latest first: removing a barrier never moves one earlier in pre-order.
  for (auto it = hand.rbegin(); it != hand.rend(); ++it) {
    Block& block = block_at(result.body, *it);
    size_t index = it->back();
    Stmt removed = block[index];
    block.erase(block.begin() + static_cast<std::ptrdiff_t>(index));
    ASSIGN_OR_RETURN(int without, barriers_needed(result, dependence));
    if (without > needed) {
      block.insert(block.begin() + static_cast<std::ptrdiff_t>(index), std::move(removed));
      continue;
    }
    ++report.removed;
    report.removed_lines.insert(report.removed_lines.begin(), removed.loc.line);
  }

  BarrierPlacer placer(result, dependence);
  RETURN_IF_ERROR(placer.place(result.body, {}).status());
  report.inserted = placer.inserted();
  kernel = std::move(result);
  return report;
}

absl::StatusOr<std::vector<BarrierReport>> insert_barriers(Module& module) {
  std::vector<BarrierReport> reports;
  for (Kernel& kernel : module.kernels) {
    ASSIGN_OR_RETURN(BarrierReport report, insert_barriers(kernel));
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace tilert
