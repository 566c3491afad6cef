#include "ir/verify/sync_abstract_exec.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/sync_eval.h"
#include "ir/verify/verify_context.h"

namespace tilert {
namespace {

using ThreadSet = std::vector<int32_t>;
using LoopValues = absl::flat_hash_map<SymbolId, int64_t>;

// Thread evaluations (tx-dependent conditions and indices) allowed before giving up.
constexpr int64_t kMaxThreadEvaluations = 20000000;

struct Frame {
  const Block* block = nullptr;
  size_t next = 0;
  ThreadSet active;  // the task's threads that execute this block
  const ForOp* loop = nullptr;
  int64_t iteration = 0, end = 0;
};

enum class TaskState { kRunnable, kWaitMbarrier, kWaitNamed, kJoining, kDone };

struct Task {
  std::vector<Frame> frames;
  LoopValues loop_values;
  VectorClock clock;
  TaskState state = TaskState::kRunnable;
  std::optional<size_t> parent;
  size_t children_left = 0;
  // While waiting:
  const Stmt* wait_stmt = nullptr;
  std::pair<SymbolId, int64_t> mbarrier;
  int64_t parity = 0;
  int64_t named_id = 0;
  uint64_t named_generation = 0;
};

struct MbarrierState {
  SymbolId symbol = kNoSymbol;
  int64_t index = 0;
  int64_t phase = 0, arrivals = 0, pending_arrivals = 0, pending_bytes = 0;
  VectorClock accumulated;  // arrivals and completions of the phase in progress
  VectorClock completed;    // those of the last completed phase
};

struct NamedBarrierState {
  int64_t expected = 0, arrived = 0;
  uint64_t generation = 0;
  VectorClock accumulated;
  std::vector<VectorClock> completed;  // by generation
};

bool arrives_on_mbarrier(const Stmt& s) {
  return s.as<MbarrierArriveOp>() || s.as<MbarrierExpectTxOp>() || s.as<CopyAsyncOp>();
}

bool is_sync_stmt(const Stmt& s) {
  return arrives_on_mbarrier(s) || s.as<MbarrierWaitOp>() || s.as<NamedBarrierOp>() ||
         s.as<BarrierOp>() || s.as<ClusterSyncOp>() || s.as<RoleOp>();
}

class SyncExecutor {
 public:
  SyncExecutor(const Kernel& kernel, int64_t max_steps)
      : kernel_(kernel), eval_(kernel), max_steps_(max_steps) {}

  SyncExecution run() {
    ThreadSet all(static_cast<size_t>(std::max(kernel_.threads, 0)));
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
    start_task("the block", &kernel_.body, std::move(all), std::nullopt);
    out_.arrival_sources.resize(kernel_.symbols.size());
    while (true) {
      bool progress = false;
      for (size_t t = 0; t < tasks_.size(); ++t) {
        if (run_task(t)) progress = true;
        if (give_up_) return skipped();
        if (out_.overshoot) return finish(SyncExecution::Result::kOvershoot);
      }
      if (std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.state == TaskState::kDone; }))
        return finish(SyncExecution::Result::kCompleted);
      if (!progress) break;
    }
    for (size_t t = 0; t < tasks_.size(); ++t) {
      const Task& task = tasks_[t];
      if (task.state != TaskState::kWaitMbarrier && task.state != TaskState::kWaitNamed) continue;
      BlockedTask b;
      b.task = t;
      b.wait = task.wait_stmt;
      if (task.state == TaskState::kWaitMbarrier) {
        b.on_mbarrier = true;
        b.mbarrier = snapshot(mbarriers_[task.mbarrier]);
        b.parity = task.parity;
      } else {
        const NamedBarrierState& n = named_[task.named_id];
        b.named_id = task.named_id;
        b.named_arrived = n.arrived;
        b.named_expected = n.expected;
      }
      out_.blocked.push_back(b);
    }
    return finish(SyncExecution::Result::kDeadlock);
  }

 private:
  SyncExecution skipped() {
    SyncExecution s;
    s.result = SyncExecution::Result::kSkipped;
    return s;
  }

  SyncExecution finish(SyncExecution::Result result) {
    out_.result = result;
    out_.race = log_.race();
    return std::move(out_);
  }

  void start_task(std::string name, const Block* body, ThreadSet threads, std::optional<size_t> parent) {
    size_t id = tasks_.size();
    Task task;
    if (parent) {
      task.loop_values = tasks_[*parent].loop_values;
      task.clock = tasks_[*parent].clock;
    }
    task.clock.set(id, 1);
    task.parent = parent;
    task.frames.push_back(Frame{body, 0, std::move(threads)});
    std::vector<SymbolId> arrives_on;
    visit_stmts(*body, [&](const Stmt& s) {
      if (!arrives_on_mbarrier(s)) return;
      SymbolId b = stmt_mbarrier(s)->barrier;
      if (std::find(arrives_on.begin(), arrives_on.end(), b) == arrives_on.end()) arrives_on.push_back(b);
    });
    tasks_.push_back(std::move(task));
    out_.task_names.push_back(std::move(name));
    out_.task_arrives_on.push_back(std::move(arrives_on));
  }

  void tick(size_t t) { tasks_[t].clock.set(t, tasks_[t].clock.of(t) + 1); }

  // Runs task t until it blocks or ends; true when it got past anything.
  bool run_task(size_t t) {
    Task& task = tasks_[t];
    if (task.state == TaskState::kDone || task.state == TaskState::kJoining) return false;
    if (task.state != TaskState::kRunnable && !try_resume(t)) return false;
    while (tasks_[t].state == TaskState::kRunnable && !give_up_ && !out_.overshoot) {
      if (++steps_ > max_steps_) {
        give_up_ = true;
        break;
      }
      step(t);
    }
    return true;
  }

  bool try_resume(size_t t) {
    Task& task = tasks_[t];
    if (task.state == TaskState::kWaitMbarrier) {
      MbarrierState& b = mbarriers_[task.mbarrier];
      if (b.phase % 2 == task.parity) return false;
      task.clock.join(b.completed);
    } else {
      NamedBarrierState& n = named_[task.named_id];
      if (n.generation <= task.named_generation) return false;
      task.clock.join(n.completed[task.named_generation]);
    }
    task.state = TaskState::kRunnable;
    tick(t);
    return true;
  }

  void step(size_t t) {
    Task& task = tasks_[t];
    if (task.frames.empty()) {
      task.state = TaskState::kDone;
      if (task.parent) {
        Task& parent = tasks_[*task.parent];
        parent.clock.join(task.clock);
        if (--parent.children_left == 0) {
          parent.state = TaskState::kRunnable;
          tick(*task.parent);
        }
      }
      return;
    }
    Frame& frame = task.frames.back();
    if (frame.next >= frame.block->size()) {
      if (frame.loop && ++frame.iteration < frame.end) {
        task.loop_values[frame.loop->var] = frame.iteration;
        frame.next = 0;
      } else {
        task.frames.pop_back();
      }
      return;
    }
    const Block& block = *frame.block;
    const Stmt& s = block[frame.next];
    if (s.as<RoleOp>()) {
      size_t first = frame.next;
      size_t end = first;
      while (end < block.size() && block[end].as<RoleOp>()) ++end;
      frame.next = end;
      fork_roles(t, block, first, end);
      return;
    }
    ++frame.next;
    ThreadSet active = frame.active;  // frames may grow below
    execute(t, s, active);
  }

  void fork_roles(size_t t, const Block& block, size_t first, size_t end) {
    const ThreadSet& parent_threads = tasks_[t].frames.back().active;
    int64_t base = parent_threads.empty() ? 0 : parent_threads.front();
    tick(t);
    tasks_[t].state = TaskState::kJoining;
    tasks_[t].children_left = end - first;
    for (size_t i = first; i < end; ++i) {
      const RoleOp& role = *block[i].as<RoleOp>();
      ThreadSet threads;
      for (int32_t k = 0; k < role.threads; ++k) threads.push_back(static_cast<int32_t>(base + k));
      base += role.threads;
      start_task(absl::StrCat("role ", role.name), &role.body, std::move(threads), t);
    }
  }

  std::optional<int64_t> uniform(size_t t, const Expr& e) {
    if (SyncEvaluator::reads_tx(e)) return std::nullopt;
    return eval_.eval(e, tasks_[t].loop_values, std::nullopt);
  }

  std::optional<int64_t> need(size_t t, const Expr& e) {
    auto v = uniform(t, e);
    if (!v) give_up_ = true;
    return v;
  }

  void execute(size_t t, const Stmt& s, const ThreadSet& active) {
    record_accesses(t, s, active);
    if (auto* f = s.as<ForOp>()) {
      auto begin = need(t, f->begin), end = need(t, f->end);
      if (!begin || !end || *begin >= *end) return;
      tasks_[t].loop_values[f->var] = *begin;
      tasks_[t].frames.push_back(Frame{&f->body, 0, active, f, *begin, *end});
    } else if (auto* i = s.as<IfOp>()) {
      branch(t, *i, active);
    } else if (auto* a = s.as<MbarrierArriveOp>()) {
      if (MbarrierState* b = mbarrier(t, a->barrier)) arrive(t, s, *b, static_cast<int64_t>(active.size()));
    } else if (auto* x = s.as<MbarrierExpectTxOp>()) {
      MbarrierState* b = mbarrier(t, x->barrier);
      auto bytes = need(t, x->bytes);
      if (!b || !bytes) return;
      b->pending_bytes += *bytes;
      arrive(t, s, *b, 1);
    } else if (auto* c = s.as<CopyAsyncOp>()) {
      MbarrierState* b = mbarrier(t, c->barrier);
      auto shape = region_shape(kernel_, c->dst);
      if (!b || !shape) {
        give_up_ = true;
        return;
      }
      int64_t bytes = dtype_size(kernel_.symbol(c->dst.buffer).dtype);
      for (int64_t d : *shape) bytes *= d;
      b->accumulated.join(tasks_[t].clock);
      b->pending_bytes -= bytes;
      complete_if_done(*b);
      tick(t);
    } else if (auto* w = s.as<MbarrierWaitOp>()) {
      wait(t, s, *w);
    } else if (auto* n = s.as<NamedBarrierOp>()) {
      named_barrier(t, s, n->id, n->thread_count, n->wait, static_cast<int64_t>(active.size()));
    } else if (s.as<BarrierOp>() || s.as<ClusterSyncOp>()) {
      // Within one task a block barrier only orders that task; across roles it is the
      // divergence rule's business.
      if (static_cast<int64_t>(active.size()) != kernel_.threads) give_up_ = true;
      tick(t);
    }
  }

  void branch(size_t t, const IfOp& op, const ThreadSet& active) {
    ThreadSet taken, not_taken;
    if (!SyncEvaluator::reads_tx(op.condition)) {
      auto v = eval_.eval(op.condition, tasks_[t].loop_values, std::nullopt);
      if (v) (*v != 0 ? taken : not_taken) = active;
    } else {
      for (int32_t thread : active) {
        auto v = eval_.eval(op.condition, tasks_[t].loop_values, thread);
        if (!v) {
          taken.clear();
          not_taken.clear();
          break;
        }
        (*v != 0 ? taken : not_taken).push_back(thread);
      }
      thread_evaluations_ += static_cast<int64_t>(active.size());
      if (thread_evaluations_ > kMaxThreadEvaluations) give_up_ = true;
    }
    if (taken.empty() && not_taken.empty() && !active.empty()) {
      // A condition on data: fine around plain computation (both sides may run), not around
      // synchronization, whose outcome would then be a guess.
      if (has_sync(op.then_body) || has_sync(op.else_body)) {
        give_up_ = true;
        return;
      }
      taken = not_taken = active;
    }
    // The frame pushed last runs first: then before else.
    if (!not_taken.empty() && !op.else_body.empty())
      tasks_[t].frames.push_back(Frame{&op.else_body, 0, std::move(not_taken)});
    if (!taken.empty() && !op.then_body.empty())
      tasks_[t].frames.push_back(Frame{&op.then_body, 0, std::move(taken)});
  }

  bool has_sync(const Block& block) {
    bool found = false;
    visit_stmts(block, [&](const Stmt& s) { found = found || is_sync_stmt(s); });
    return found;
  }

  MbarrierState* mbarrier(size_t t, const MbarrierRef& ref) {
    auto index = need(t, ref.index);
    if (!index) return nullptr;
    const Symbol& sym = kernel_.symbol(ref.barrier);
    int64_t length = sym.shape.empty() ? 1 : const_int_value(sym.shape[0]).value_or(0);
    if (*index < 0 || *index >= length || sym.arrivals < 1) {
      give_up_ = true;  // the mbarrier rules report these
      return nullptr;
    }
    auto [it, fresh] = mbarriers_.try_emplace({ref.barrier, *index});
    if (fresh) {
      it->second.symbol = ref.barrier;
      it->second.index = *index;
      it->second.arrivals = sym.arrivals;
      it->second.pending_arrivals = sym.arrivals;
    }
    return &it->second;
  }

  static MbarrierSnapshot snapshot(const MbarrierState& b) {
    return MbarrierSnapshot{b.symbol, b.index, b.phase, b.arrivals, b.pending_arrivals, b.pending_bytes};
  }

  void arrive(size_t t, const Stmt& s, MbarrierState& b, int64_t count) {
    SymbolId symbol = stmt_mbarrier(s)->barrier;
    std::vector<ArrivalSource>& sources = out_.arrival_sources[symbol];
    auto it = std::find_if(sources.begin(), sources.end(), [&](const ArrivalSource& a) { return a.stmt == &s; });
    if (it == sources.end()) sources.push_back(ArrivalSource{t, &s, count});
    else it->arrivals = std::max(it->arrivals, count);
    if (b.pending_arrivals == 0) {
      // Every arrival of the phase is in and it only waits for bytes: hardware has no room for
      // this one (the CPU backend reports it too).
      out_.overshoot = ArrivalOvershoot{t, &s, snapshot(b), count};
      return;
    }
    if (count > b.pending_arrivals) {
      // One op's arrivals would complete a phase part-way and spill into the next: legal, but
      // what the kernel means by it is anybody's guess.
      give_up_ = true;
      return;
    }
    b.accumulated.join(tasks_[t].clock);
    b.pending_arrivals -= count;
    complete_if_done(b);
    tick(t);
  }

  static void complete_if_done(MbarrierState& b) {
    if (b.pending_arrivals != 0 || b.pending_bytes != 0) return;
    ++b.phase;
    b.pending_arrivals = b.arrivals;
    b.completed = std::move(b.accumulated);
    b.accumulated = VectorClock();
  }

  void wait(size_t t, const Stmt& s, const MbarrierWaitOp& w) {
    MbarrierState* b = mbarrier(t, w.barrier);
    auto parity = need(t, w.parity);
    if (!b || !parity) return;
    if (*parity != 0 && *parity != 1) {
      give_up_ = true;
      return;
    }
    Task& task = tasks_[t];
    task.wait_stmt = &s;
    task.mbarrier = {b->symbol, b->index};
    task.parity = *parity;
    task.state = TaskState::kWaitMbarrier;
    try_resume(t);
  }

  void named_barrier(size_t t, const Stmt& s, const Expr& id_expr, const Expr& count_expr, bool waits,
                     int64_t threads) {
    auto id = need(t, id_expr), expected = need(t, count_expr);
    if (!id || !expected) return;
    NamedBarrierState& n = named_[*id];
    if (n.arrived == 0) n.expected = *expected;
    if (n.expected != *expected || n.arrived + threads > n.expected) {
      give_up_ = true;  // inconsistent counts: not this rule's business
      return;
    }
    uint64_t generation = n.generation;
    n.arrived += threads;
    n.accumulated.join(tasks_[t].clock);
    if (n.arrived == n.expected) {
      n.completed.push_back(std::move(n.accumulated));
      n.accumulated = VectorClock();
      n.arrived = 0;
      ++n.generation;
    }
    tick(t);
    if (!waits) return;
    Task& task = tasks_[t];
    task.wait_stmt = &s;
    task.named_id = *id;
    task.named_generation = generation;
    task.state = TaskState::kWaitNamed;
    try_resume(t);
  }

  // ---- shared-memory accesses ----

  std::optional<SharedSpan> span(size_t t, SymbolId buffer, const Expr* first_index, int64_t extent,
                                 const ThreadSet& active) {
    if (buffer >= kernel_.symbols.size() || kernel_.symbol(buffer).kind != SymbolKind::kShared)
      return std::nullopt;
    SharedSpan span;
    span.buffer = buffer;
    if (first_index) {
      auto range = eval_.range_over(*first_index, tasks_[t].loop_values, active, &thread_evaluations_);
      if (range) {
        span.whole = false;
        span.first = range->first;
        span.last = range->second + extent - 1;
      }
    }
    return span;
  }

  void access(size_t t, const Stmt& s, std::optional<SharedSpan> span, bool write) {
    if (!span) return;
    const Task& task = tasks_[t];
    log_.record(SharedAccess{t, task.clock.of(t), task.clock, &s, write, *span});
  }

  void region_access(size_t t, const Stmt& s, const Region& r, bool write, const ThreadSet& active) {
    const Expr* first = r.ranges.empty() ? nullptr : &r.ranges[0].start;
    int64_t extent = r.ranges.empty() ? 1 : (r.ranges[0].index ? 1 : r.ranges[0].extent);
    access(t, s, span(t, r.buffer, first, extent, active), write);
  }

  void load_accesses(size_t t, const Stmt& s, const Expr& e, const ThreadSet& active) {
    visit_expr(e, [&](const Expr& n) {
      if (n.kind != ExprKind::kLoad) return;
      access(t, s, span(t, n.symbol, n.args.empty() ? nullptr : &n.args[0], 1, active), false);
    });
  }

  // Shared accesses of collective tile ops, parallel bodies included (parallel variables have no
  // value, so their indices cover the whole buffer). Thread-level statements outside `parallel`
  // are left out: which threads touch which elements is beyond this check.
  void stmt_accesses(size_t t, const Stmt& s, const Stmt& attributed_to, const ThreadSet& active,
                     bool in_parallel) {
    if (in_parallel) {
      for_each_stmt_expr(s, [&](const Expr& e) { load_accesses(t, attributed_to, e, active); });
      if (auto* a = s.as<AssignOp>())
        access(t, attributed_to, span(t, a->target, a->indices.empty() ? nullptr : &a->indices[0], 1, active),
               true);
    }
    if (auto* c = s.as<CopyOp>()) {
      region_access(t, attributed_to, c->src, false, active);
      region_access(t, attributed_to, c->dst, true, active);
    } else if (auto* c = s.as<CopyAsyncOp>()) {
      region_access(t, attributed_to, c->src, false, active);
      region_access(t, attributed_to, c->dst, true, active);
    } else if (auto* g = s.as<GemmOp>()) {
      region_access(t, attributed_to, g->a, false, active);
      region_access(t, attributed_to, g->b, false, active);
      region_access(t, attributed_to, g->c, true, active);
    } else if (auto* f = s.as<FillOp>()) {
      region_access(t, attributed_to, f->dst, true, active);
    } else if (auto* r = s.as<ReduceOp>()) {
      region_access(t, attributed_to, r->src, false, active);
      region_access(t, attributed_to, r->dst, true, active);
    }
  }

  void record_accesses(size_t t, const Stmt& s, const ThreadSet& active) {
    stmt_accesses(t, s, s, active, false);
    if (auto* p = s.as<ParallelOp>())
      visit_stmts(p->body, [&](const Stmt& inner) { stmt_accesses(t, inner, s, active, true); });
    if (thread_evaluations_ > kMaxThreadEvaluations) give_up_ = true;
  }

  const Kernel& kernel_;
  SyncEvaluator eval_;
  int64_t max_steps_;
  int64_t steps_ = 0;
  int64_t thread_evaluations_ = 0;
  bool give_up_ = false;
  std::deque<Task> tasks_;
  absl::flat_hash_map<std::pair<SymbolId, int64_t>, MbarrierState> mbarriers_;
  absl::flat_hash_map<int64_t, NamedBarrierState> named_;
  SharedAccessLog log_;
  SyncExecution out_;
};

}  // namespace

SyncExecution execute_sync_skeleton(const Kernel& kernel, int64_t max_steps) {
  return SyncExecutor(kernel, max_steps).run();
}

}  // namespace tilert
