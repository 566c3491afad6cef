// Statement execution with active-thread masks: control flow, declarations, roles, parallel loops.
#include "absl/strings/str_cat.h"
#include "backends/cpu/executor.h"
#include "backends/cpu/sync_ops.h"
#include "backends/cpu/tile_ops.h"
#include "ir/status.h"

namespace tilert::cpu {
namespace {

// Tiles larger than this are refused rather than allocated (hostile or broken IR).
constexpr int64_t kMaxTileElements = int64_t{1} << 26;

// Restores the executor's current statement when a nested statement finishes.
class CurrentStmt {
 public:
  CurrentStmt(const Stmt*& slot, const Stmt* stmt) : slot_(slot), saved_(slot) { slot_ = stmt; }
  ~CurrentStmt() { slot_ = saved_; }

 private:
  const Stmt*& slot_;
  const Stmt* saved_;
};

bool allowed_in_parallel_body(const Stmt& s) {
  return s.as<DeclareOp>() || s.as<AssignOp>() || s.as<IfOp>() || s.as<ForOp>() || s.as<AtomicAddOp>();
}

}  // namespace

ActiveThreads ActiveThreads::all(int64_t first, int64_t count) {
  ActiveThreads t;
  t.first = first;
  t.on.assign(static_cast<size_t>(count), 1);
  return t;
}

int64_t ActiveThreads::count() const {
  int64_t n = 0;
  for (uint8_t b : on) n += b;
  return n;
}

int64_t ActiveThreads::first_active() const {
  for (size_t lane = 0; lane < on.size(); ++lane)
    if (on[lane]) return first + static_cast<int64_t>(lane);
  return -1;
}

absl::Status TaskExecutor::error(std::string_view message) const {
  std::string where = absl::StrCat("kernel ", kernel_.name);
  if (current_ != nullptr) {
    if (current_->loc.line != 0) absl::StrAppend(&where, " line ", current_->loc.line);
    absl::StrAppend(&where, ": ", av(stmt_op_name(*current_)));
  }
  // A fault of the running kernel (out-of-bounds access, broken IR): an execution error.
  return absl::OutOfRangeError(absl::StrCat(where, ": ", av(message)));
}

std::string TaskExecutor::at_line() const {
  if (current_ == nullptr || current_->loc.line == 0) return {};
  return absl::StrCat(" at line ", current_->loc.line);
}

absl::Status TaskExecutor::check_collective(const ActiveThreads& threads) const {
  if (parallel_threads_ != nullptr) return error("is not allowed inside a parallel body");
  if (!threads.full())
    return error(absl::StrCat("collective op under thread-dependent control flow (", threads.count(), " of ",
                              threads.on.size(), " threads active)"));
  return absl::OkStatus();
}

absl::Status TaskExecutor::storage(SymbolId id, Tile** out) const {
  if (id >= block_.tiles.size() || block_.tiles[id] == nullptr) {
    std::string name = id < kernel_.symbols.size() ? kernel_.symbols[id].name : absl::StrCat("#", id);
    return error(absl::StrCat(name, " is used before its declaration ran"));
  }
  *out = block_.tiles[id].get();
  return absl::OkStatus();
}

absl::Status TaskExecutor::tensor(SymbolId id, const GlobalTensor** out) const {
  if (id >= launch_.tensors.size() || kernel_.symbols[id].kind != SymbolKind::kTensorParam)
    return error(absl::StrCat("symbol #", id, " is not a tensor parameter"));
  *out = &launch_.tensors[id];
  return absl::OkStatus();
}

absl::Status TaskExecutor::run(const Block& body, const ActiveThreads& threads) {
  return exec_block(body, threads);
}

absl::Status TaskExecutor::exec_block(const Block& body, const ActiveThreads& threads) {
  for (size_t i = 0; i < body.size(); ++i) {
    RETURN_IF_ERROR(scheduler_.check_alive());
    if (body[i].as<RoleOp>() == nullptr) {
      RETURN_IF_ERROR(exec_stmt(body[i], threads));
      // Race checking: the first race found by this statement's accesses ends the run.
      if (races_ != nullptr) RETURN_IF_ERROR(block_.cluster->races->status());
      continue;
    }
    // Consecutive roles split the group's threads and run concurrently.
    CurrentStmt current(current_, &body[i]);
    std::vector<const RoleOp*> roles;
    for (; i < body.size() && body[i].as<RoleOp>() != nullptr; ++i) roles.push_back(body[i].as<RoleOp>());
    --i;
    RETURN_IF_ERROR(exec_roles(roles, threads));
  }
  return absl::OkStatus();
}

absl::Status TaskExecutor::exec_stmt(const Stmt& s, const ActiveThreads& threads) {
  CurrentStmt current(current_, &s);
  if (parallel_threads_ != nullptr && !allowed_in_parallel_body(s))
    return error("is not allowed inside a parallel body");
  if (auto* op = s.as<DeclareOp>()) return exec_declare(*op, threads);
  if (auto* op = s.as<CopyOp>()) return exec_copy(*this, *op, threads);
  if (auto* op = s.as<CopyAsyncOp>()) return exec_copy_async(*this, *op, threads);
  if (auto* op = s.as<GemmOp>()) return exec_gemm(*this, *op, threads);
  if (auto* op = s.as<FillOp>()) return exec_fill(*this, *op, threads);
  if (auto* op = s.as<ReduceOp>()) return exec_reduce(*this, *op, threads);
  if (auto* op = s.as<ParallelOp>()) return exec_parallel(*op, threads);
  if (auto* op = s.as<ForOp>()) return exec_for(*op, threads);
  if (auto* op = s.as<IfOp>()) return exec_if(*op, threads);
  if (auto* op = s.as<AssignOp>()) return exec_assign(*op, threads);
  if (auto* op = s.as<AtomicAddOp>()) return exec_atomic_add(*op, threads);
  if (s.as<BarrierOp>()) return exec_barrier(*this, threads);
  if (auto* op = s.as<NamedBarrierOp>()) return exec_named_barrier(*this, *op, threads);
  if (auto* op = s.as<MbarrierArriveOp>()) return exec_arrive(*this, *op, threads);
  if (auto* op = s.as<MbarrierExpectTxOp>()) return exec_expect_tx(*this, *op, threads);
  if (auto* op = s.as<MbarrierWaitOp>()) return exec_wait(*this, *op, threads);
  if (s.as<ClusterSyncOp>()) return exec_cluster_sync(*this, threads);
  // Threads run in lockstep here and every store is immediately visible: subgroup barriers and
  // fences have nothing to order.
  if (s.as<SubgroupBarrierOp>() && races_ != nullptr) races_->subgroup_barrier(threads.first, threads.on);
  if (s.as<SubgroupBarrierOp>() && trace_lane_ != nullptr)  // sync profile: a wait that never blocks
    trace_lane_->record(SyncEventKind::kWait, absl::StrCat("subgroup_barrier", at_line()), trace_lane_->now_ns(),
                        threads.count());
  if (s.as<SubgroupBarrierOp>() || s.as<FenceOp>()) return absl::OkStatus();
  if (s.as<RoleOp>()) return exec_roles({s.as<RoleOp>()}, threads);
  return error("empty statement");
}

absl::Status TaskExecutor::exec_declare(const DeclareOp& op, const ActiveThreads& threads) {
  if (op.symbol >= kernel_.symbols.size() || op.symbol >= block_.tiles.size())
    return error(absl::StrCat("unknown symbol #", op.symbol));
  const Symbol& s = kernel_.symbols[op.symbol];
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (size_t d = 0; d < s.shape.size(); ++d) {
    std::optional<int64_t> n = const_int_value(s.shape[d]);
    if (!n || *n < 0) return error(absl::StrCat(s.name, ": dimension ", d, " is not a non-negative constant"));
    if (*n > 0 && elements > kMaxTileElements / *n)
      return error(absl::StrCat(s.name, ": more than ", kMaxTileElements, " elements"));
    elements *= *n;
    shape.push_back(*n);
  }
  if (s.kind == SymbolKind::kMbarrier) {
    if (s.arrivals < 1) return error(absl::StrCat("mbarrier ", s.name, " needs an arrival count >= 1"));
    int64_t length = shape.empty() ? 1 : elements;
    if (length > 1024) return error(absl::StrCat("mbarrier ", s.name, ": array of ", length, " is too large"));
    block_.mbarriers[op.symbol].assign(static_cast<size_t>(length), Mbarrier(s.arrivals));
    return absl::OkStatus();
  }
  bool per_thread = s.kind == SymbolKind::kLocal;
  if (!per_thread && s.kind != SymbolKind::kShared && s.kind != SymbolKind::kFragment)
    return error(absl::StrCat(s.name, " (", av(symbol_kind_name(s.kind)), ") cannot be declared in a body"));
  int64_t lanes = per_thread ? block_.threads : 1;
  if (elements > kMaxTileElements / lanes)
    return error(absl::StrCat(s.name, ": ", elements, " elements (x", lanes, " threads) is more than the CPU "
                              "backend allocates (", kMaxTileElements, ")"));
  std::unique_ptr<Tile>& slot = block_.tiles[op.symbol];
  if (per_thread && slot != nullptr) {
    // A per-thread variable starts again at zero for the threads that (re)declare it; other
    // threads (other roles, other parallel iterations) keep theirs.
    threads.for_each([&](int64_t tx) { slot->clear_lane(tx); });
    return absl::OkStatus();
  }
  if (slot != nullptr && races_ != nullptr) block_.cluster->races->forget(*slot);
  slot = std::make_unique<Tile>(s.name, s.dtype, std::move(shape), lanes);
  return absl::OkStatus();
}

Tile* TaskExecutor::loop_variable(SymbolId id) {
  std::unique_ptr<Tile>& slot = block_.tiles[id];
  if (slot == nullptr) slot = std::make_unique<Tile>(kernel_.symbols[id].name, kernel_.symbols[id].dtype,
                                                     std::vector<int64_t>{}, block_.threads);
  return slot.get();
}

absl::Status TaskExecutor::exec_for(const ForOp& op, const ActiveThreads& threads) {
  if (op.var >= kernel_.symbols.size() || op.var >= block_.tiles.size())
    return error(absl::StrCat("unknown loop variable #", op.var));
  // Bounds are per thread: a loop with thread-dependent bounds runs until no thread continues.
  std::vector<int64_t> next(threads.on.size()), end(threads.on.size());
  absl::Status status;
  threads.for_each([&](int64_t tx) {
    Value b, e;
    if (!status.ok()) return;
    status = eval(op.begin, tx, &b);
    if (status.ok()) status = eval(op.end, tx, &e);
    next[static_cast<size_t>(tx - threads.first)] = b.as_int();
    end[static_cast<size_t>(tx - threads.first)] = e.as_int();
  });
  RETURN_IF_ERROR(status);
  Tile* var = loop_variable(op.var);
  DType type = kernel_.symbols[op.var].dtype;
  ActiveThreads iteration = threads;
  while (true) {
    for (size_t lane = 0; lane < threads.on.size(); ++lane)
      iteration.on[lane] = threads.on[lane] && next[lane] < end[lane];
    if (iteration.count() == 0) return absl::OkStatus();
    iteration.for_each([&](int64_t tx) {
      size_t lane = static_cast<size_t>(tx - threads.first);
      write_per_thread(*var, op.var, tx, 0, convert(Value::integer(next[lane]), type, true));
      ++next[lane];
    });
    RETURN_IF_ERROR(exec_block(op.body, iteration));
  }
}

absl::Status TaskExecutor::exec_if(const IfOp& op, const ActiveThreads& threads) {
  ActiveThreads taken = threads, not_taken = threads;
  absl::Status status;
  threads.for_each([&](int64_t tx) {
    Value c;
    if (!status.ok()) return;
    status = eval(op.condition, tx, &c);
    size_t lane = static_cast<size_t>(tx - threads.first);
    taken.on[lane] = c.truthy();
    not_taken.on[lane] = !c.truthy();
  });
  RETURN_IF_ERROR(status);
  if (taken.count() > 0) RETURN_IF_ERROR(exec_block(op.then_body, taken));
  if (not_taken.count() > 0 && !op.else_body.empty()) RETURN_IF_ERROR(exec_block(op.else_body, not_taken));
  return absl::OkStatus();
}

absl::Status TaskExecutor::exec_roles(const std::vector<const RoleOp*>& roles, const ActiveThreads& threads) {
  if (parallel_threads_ != nullptr) return error("is not allowed inside a parallel body");
  if (!threads.full())
    return error(absl::StrCat("roles under thread-dependent control flow (", threads.count(), " of ",
                              threads.on.size(), " threads active)"));
  int64_t needed = 0;
  for (const RoleOp* r : roles) {
    if (r->threads < 1) return error(absl::StrCat("role ", r->name, " has ", r->threads, " threads"));
    needed += r->threads;
  }
  if (needed > static_cast<int64_t>(threads.on.size()))
    return error(absl::StrCat("roles need ", needed, " threads but the group has ", threads.on.size()));
  std::vector<std::string> labels;
  std::vector<ClusterScheduler::Body> bodies;
  int64_t first = threads.first;
  for (const RoleOp* r : roles) {
    std::string block_label = block_.cluster->many_blocks
        ? absl::StrCat("block (", block_.index[0], ",", block_.index[1], ",", block_.index[2], ") ")
        : std::string();
    labels.push_back(absl::StrCat(block_label, "role ", r->name, " (threads ", first, "..", first + r->threads - 1, ")"));
    bodies.push_back([this, r, first, position = bodies.size()](Task& task) {
      TaskExecutor role(launch_, block_, scheduler_, task);
      // Race checking: the role starts with everything its parent did (fork).
      if (races_ != nullptr) role.races_ = races_->start_child(position, &r->name);
      absl::Status status = role.run(r->body, ActiveThreads::all(first, r->threads));
      if (role.races_ != nullptr) role.races_->finish();
      return status;
    });
    first += r->threads;
  }
  RETURN_IF_ERROR(scheduler_.run_children(task_, labels, bodies));
  if (races_ != nullptr) races_->join_children();  // the parent resumes after all its roles
  return absl::OkStatus();
}

absl::Status TaskExecutor::exec_parallel(const ParallelOp& op, const ActiveThreads& threads) {
  RETURN_IF_ERROR(check_collective(threads));
  size_t rank = op.vars.size();
  if (op.begins.size() != rank || op.ends.size() != rank) return error("ranges do not match the variables");
  std::vector<int64_t> begin(rank), extent(rank);
  int64_t total = 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t e;
    if (op.vars[d] >= kernel_.symbols.size() || op.vars[d] >= block_.tiles.size())
      return error(absl::StrCat("unknown loop variable #", op.vars[d]));
    RETURN_IF_ERROR(eval_uniform_int(op.begins[d], threads, "range start", &begin[d]));
    RETURN_IF_ERROR(eval_uniform_int(op.ends[d], threads, "range end", &e));
    extent[d] = std::max<int64_t>(0, e - begin[d]);
    if (extent[d] > 0 && total > (int64_t{1} << 40) / extent[d]) return error("iteration space too large");
    total *= extent[d];
  }
  // The body runs once per element as a single thread (the group's first): iterations are
  // independent, so which thread runs which is the lowerer's business.
  parallel_local_.assign(kernel_.symbols.size(), 0);
  for (SymbolId v : op.vars) parallel_local_[v] = 1;
  visit_stmts(op.body, [&](const Stmt& s) {
    if (auto* d = s.as<DeclareOp>(); d && d->symbol < parallel_local_.size()) parallel_local_[d->symbol] = 1;
    if (auto* f = s.as<ForOp>(); f && f->var < parallel_local_.size()) parallel_local_[f->var] = 1;
  });
  ActiveThreads one = ActiveThreads::all(threads.first_active(), 1);
  parallel_threads_ = &threads;
  std::vector<Tile*> vars;
  for (SymbolId v : op.vars) vars.push_back(loop_variable(v));
  absl::Status status;
  for (int64_t it = 0; it < total && status.ok(); ++it) {
    int64_t rest = it;
    for (size_t d = rank; d-- > 0;) {
      vars[d]->set(one.first, 0, convert(Value::integer(begin[d] + rest % extent[d]),
                                         kernel_.symbols[op.vars[d]].dtype, true));
      rest /= extent[d];
    }
    status = exec_block(op.body, one);
  }
  parallel_threads_ = nullptr;
  return status;
}

}  // namespace tilert::cpu
