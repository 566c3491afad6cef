// Synchronization without forward progress: mbarriers and named barriers are emulated in private
// state that every thread updates identically, and roles are merged into one schedule that all
// threads run together. See lowering/README.md, "Roles and barriers on the merged schedule".
//
// Each role's body becomes a list of nodes: straight runs of statements, each gated by the wait
// that precedes it, plus loop-enter / loop-next nodes for a top-level loop containing waits. The
// schedule repeatedly runs, role by role, every node whose wait is satisfied; a full round in
// which no role moves while some role is unfinished is a deadlock, reported through the status
// record. No thread ever spins on another: every wait is a check of state already settled.
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

bool is_wait(const Stmt& s) {
  if (s.as<MbarrierWaitOp>() != nullptr) return true;
  if (const auto* n = s.as<NamedBarrierOp>()) return n->wait;
  return false;
}

bool contains_wait(const Stmt& s) {
  bool found = false;
  visit_stmts(Block{s}, [&](const Stmt& x) { found = found || is_wait(x); });
  return found;
}

struct Node {
  enum class Kind : uint8_t { kRun, kLoopEnter, kLoopNext };
  Kind kind = Kind::kRun;
  const Stmt* wait = nullptr;  // kRun: the wait gating this node
  std::vector<const Stmt*> stmts;
  const Stmt* loop = nullptr;  // loop nodes
  int loop_first = 0, loop_exit = 0;
  uint32_t end_var = 0, site = 0;
};

// Splits a role body into nodes; at most one level of loops containing waits.
absl::Status build_nodes(Lowerer& l, const Block& block, bool in_loop, std::vector<Node>& nodes) {
  nodes.emplace_back();
  for (const Stmt& s : block) {
    if (s.as<MbarrierWaitOp>() != nullptr) {
      nodes.emplace_back();
      nodes.back().wait = &s;
    } else if (const auto* n = s.as<NamedBarrierOp>(); n != nullptr && n->wait) {
      nodes.back().stmts.push_back(&s);  // its arrival
      nodes.emplace_back();
      nodes.back().wait = &s;
    } else if (const auto* f = s.as<ForOp>(); f != nullptr && contains_wait(s)) {
      if (in_loop) return l.unsupported(s, "a wait nested two loops deep inside a role");
      Node enter;
      enter.kind = Node::Kind::kLoopEnter;
      enter.loop = &s;
      nodes.push_back(enter);
      size_t enter_index = nodes.size() - 1;
      RETURN_IF_ERROR(build_nodes(l, f->body, true, nodes));
      Node next;
      next.kind = Node::Kind::kLoopNext;
      next.loop = &s;
      nodes.push_back(next);
      size_t next_index = nodes.size() - 1;
      nodes[enter_index].loop_first = static_cast<int>(enter_index + 1);
      nodes[enter_index].loop_exit = static_cast<int>(next_index + 1);
      nodes[next_index].loop_first = static_cast<int>(enter_index + 1);
      nodes[next_index].loop_exit = static_cast<int>(next_index + 1);
      nodes.emplace_back();
    } else if (contains_wait(s)) {
      return l.unsupported(s, "a wait under an if or inside a nested block of a role on this target");
    } else {
      nodes.back().stmts.push_back(&s);
    }
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t Lowerer::add_sync_site(std::string barrier, uint32_t line) {
  fn_.sync_sites.push_back({std::move(barrier), role_, line});
  return static_cast<uint32_t>(fn_.sync_sites.size() - 1);
}

void Lowerer::record_deadlock(simt::Expr first, simt::Expr second) {
  auto store = [&](int word, simt::Expr value) {
    simt::Stmt st;
    st.kind = simt::StmtKind::kStore;
    st.space = Space::kGlobal;
    st.id = static_cast<uint32_t>(fn_.status_param);
    st.operands = {i32(word), simt::Expr::cast(DType::kU32, std::move(value))};
    emit(std::move(st));
  };
  store(1, add(std::move(first), mul(std::move(second), i32(65536))));
  // The block as the kernel names it (bx, by).
  store(2, block_y_ ? var(*block_y_) : simt::Expr::builtin(simt::Builtin::kWorkgroupIdY));
  store(3, block_x_ ? var(*block_x_) : simt::Expr::builtin(simt::Builtin::kWorkgroupIdX));
  store(0, i32(static_cast<int64_t>(simt::StatusCode::kDeadlock)));
}

absl::Status Lowerer::finish_profile() {
  // The block's linear index x + gx * (y + gy * z), from the grid's extents.
  std::vector<simt::Expr> extents;
  simt::Body prep;
  RETURN_IF_ERROR(into(prep, [&]() -> absl::Status {
    for (const Expr& e : kernel_.grid) {
      ASSIGN_OR_RETURN(simt::Expr v, expr(e));
      extents.push_back(simt::Expr::cast(DType::kI32, std::move(v)));
    }
    return absl::OkStatus();
  }));
  const simt::Builtin ids[3] = {simt::Builtin::kWorkgroupIdX, simt::Builtin::kWorkgroupIdY, simt::Builtin::kWorkgroupIdZ};
  if (extents.empty() || extents.size() > 3) return absl::InternalError("a grid of 1..3 extents");
  simt::Expr linear = simt::Expr::builtin(ids[extents.size() - 1]);
  for (size_t d = extents.size() - 1; d-- > 0;) linear = add(simt::Expr::builtin(ids[d]), mul(extents[d], linear));
  profile_->finish(std::move(linear));
  fn_.body.insert(fn_.body.begin(), prep.begin(), prep.end());
  return absl::OkStatus();
}

absl::StatusOr<simt::Expr> Lowerer::mbarrier_index(const MbarrierRef& ref) {
  ASSIGN_OR_RETURN(simt::Expr idx, expr(ref.index));
  uint32_t v = new_var("mb", DType::kI32);
  assign(v, simt::Expr::cast(DType::kI32, std::move(idx)));
  return var(v);
}

namespace {
simt::Expr at(uint32_t array, const simt::Expr& i) { return simt::Expr::load(Space::kPrivate, array, DType::kI32, i); }
}  // namespace

// Settles a barrier whose pending arrivals and bytes both reached zero: the phase completes.
static void settle(Lowerer& l, const MbarrierState& mb, const simt::Expr& i) {
  simt::Expr done = l.bin(BinaryOp::kAnd, l.bin(BinaryOp::kEq, at(mb.pending_arrivals, i), l.i32(0)),
                          l.bin(BinaryOp::kEq, at(mb.pending_bytes, i), l.i32(0)));
  (void)l.if_then(done, [&] {
    l.assign_at(mb.parity, i, l.bin(BinaryOp::kSub, l.i32(1), at(mb.parity, i)));
    l.assign_at(mb.pending_arrivals, i, l.i32(mb.expected));
    return absl::OkStatus();
  });
}

absl::Status Lowerer::lower_mbarrier_op(const Stmt& s) {
  const int64_t threads = role_threads_ > 0 ? role_threads_ : kernel_.threads;
  if (const auto* a = s.as<MbarrierArriveOp>()) {
    const MbarrierState& mb = mbarriers_.at(a->barrier.barrier);
    ASSIGN_OR_RETURN(simt::Expr i, mbarrier_index(a->barrier));
    assign_at(mb.pending_arrivals, i, bin(BinaryOp::kSub, at(mb.pending_arrivals, i), i32(threads)));
    settle(*this, mb, i);
    return absl::OkStatus();
  }
  if (const auto* e = s.as<MbarrierExpectTxOp>()) {
    const MbarrierState& mb = mbarriers_.at(e->barrier.barrier);
    ASSIGN_OR_RETURN(simt::Expr i, mbarrier_index(e->barrier));
    ASSIGN_OR_RETURN(simt::Expr bytes, expr(e->bytes));
    assign_at(mb.pending_bytes, i, add(at(mb.pending_bytes, i), simt::Expr::cast(DType::kI32, bytes)));
    assign_at(mb.pending_arrivals, i, bin(BinaryOp::kSub, at(mb.pending_arrivals, i), i32(1)));
    settle(*this, mb, i);
    return absl::OkStatus();
  }
  if (const auto* c = s.as<CopyAsyncOp>()) {
    // No asynchronous copy engine is used on this path: the copy completes in place, then its
    // bytes count against the barrier as the hardware's completion would.
    RETURN_IF_ERROR(lower_copy(s, c->src, c->dst));
    return copy_async_done(*c);
  }
  return absl::InternalError("not an mbarrier operation");
}

absl::Status Lowerer::copy_async_done(const CopyAsyncOp& op) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, shape_of(op.dst));
  int64_t bytes = dtype_size(kernel_.symbol(op.dst.buffer).dtype);
  for (int64_t d : shape) bytes *= d;
  const MbarrierState& mb = mbarriers_.at(op.barrier.barrier);
  ASSIGN_OR_RETURN(simt::Expr i, mbarrier_index(op.barrier));
  assign_at(mb.pending_bytes, i, bin(BinaryOp::kSub, at(mb.pending_bytes, i), i32(bytes)));
  settle(*this, mb, i);
  return absl::OkStatus();
}

absl::Status Lowerer::lower_named_barrier(const Stmt& s, const NamedBarrierOp& op, const std::string&) {
  if (!named_used_) {
    named_used_ = true;
    named_count_ = new_var("named_count", DType::kI32, 16);
    named_gen_ = new_var("named_gen", DType::kI32, 16);
  }
  const int64_t threads = role_threads_ > 0 ? role_threads_ : kernel_.threads;
  ASSIGN_OR_RETURN(simt::Expr id_raw, expr(op.id));
  ASSIGN_OR_RETURN(simt::Expr n_raw, expr(op.thread_count));
  uint32_t id = new_var("nb", DType::kI32);
  assign(id, simt::Expr::cast(DType::kI32, id_raw));
  simt::Expr n = simt::Expr::cast(DType::kI32, n_raw);
  if (op.wait) {
    uint32_t target = new_var("nb_target", DType::kI32);
    named_targets_[&s] = target;
    assign(target, add(at(named_gen_, var(id)), i32(1)));
  }
  assign_at(named_count_, var(id), add(at(named_count_, var(id)), i32(threads)));
  return if_then(bin(BinaryOp::kGe, at(named_count_, var(id)), n), [&] {
    assign_at(named_count_, var(id), bin(BinaryOp::kSub, at(named_count_, var(id)), n));
    assign_at(named_gen_, var(id), add(at(named_gen_, var(id)), i32(1)));
    return absl::OkStatus();
  });
}

absl::StatusOr<simt::Expr> Lowerer::wait_condition(const Stmt& s) {
  if (const auto* w = s.as<MbarrierWaitOp>()) {
    const MbarrierState& mb = mbarriers_.at(w->barrier.barrier);
    ASSIGN_OR_RETURN(simt::Expr idx, expr(w->barrier.index));
    ASSIGN_OR_RETURN(simt::Expr parity, expr(w->parity));
    // The phase with parity p has completed once the current parity differs from p.
    return bin(BinaryOp::kNe, at(mb.parity, simt::Expr::cast(DType::kI32, idx)), simt::Expr::cast(DType::kI32, parity));
  }
  const auto* n = s.as<NamedBarrierOp>();
  auto it = named_targets_.find(&s);
  if (n == nullptr || it == named_targets_.end()) return absl::InternalError("not a wait");
  ASSIGN_OR_RETURN(simt::Expr id, expr(n->id));
  return bin(BinaryOp::kGe, at(named_gen_, simt::Expr::cast(DType::kI32, id)), var(it->second));
}

absl::Status Lowerer::lower_scheduled(const Block& body) {
  // pre-roles statements, the roles, post-roles statements.
  struct RoleProgram {
    std::string name;
    int64_t begin = 0, threads = 0;
    std::vector<Node> nodes;
    uint32_t pc = 0;
    std::map<const Stmt*, uint32_t> loop_vars;
  };
  std::vector<const Stmt*> pre, post;
  std::vector<RoleProgram> roles;
  int64_t next_begin = 0;
  for (const Stmt& s : body) {
    if (const auto* r = s.as<RoleOp>()) {
      RoleProgram p;
      p.name = r->name;
      p.begin = next_begin;
      p.threads = r->threads;
      next_begin += r->threads;
      RETURN_IF_ERROR(build_nodes(*this, r->body, false, p.nodes));
      roles.push_back(std::move(p));
    } else if (roles.empty()) {
      pre.push_back(&s);
    } else {
      post.push_back(&s);
    }
  }
  if (roles.empty()) {  // waits without roles: the block is one role
    RoleProgram p;
    p.name = "block";
    p.threads = kernel_.threads;
    RETURN_IF_ERROR(build_nodes(*this, body, false, p.nodes));
    roles.push_back(std::move(p));
    pre.clear();
  }
  for (const Stmt* s : pre)
    if (contains_wait(*s)) return unsupported(*s, "a wait outside the roles of a kernel with roles");
  for (const Stmt* s : post)
    if (contains_wait(*s)) return unsupported(*s, "a wait outside the roles of a kernel with roles");

  for (const Stmt* s : pre) RETURN_IF_ERROR(lower_stmt(*s));
  if (!tracker_.empty()) barrier_now();

  // State: a program counter per role; loop variables and bounds.
  for (RoleProgram& r : roles) {
    r.pc = new_var(absl::StrCat("pc_", r.name), DType::kI32);
    assign(r.pc, i32(0));
    for (Node& n : r.nodes) {
      if (n.kind != Node::Kind::kLoopEnter) continue;
      const ForOp& f = *n.loop->as<ForOp>();
      uint32_t v = new_var(kernel_.symbol(f.var).name, DType::kI32);
      r.loop_vars[n.loop] = v;
      n.end_var = new_var("end", DType::kI32);
      // Defined before the first round: wait conditions of other nodes read them.
      assign(v, i32(0));
      assign(n.end_var, i32(0));
    }
    for (Node& n : r.nodes)
      if (n.kind == Node::Kind::kLoopNext) {
        for (const Node& e : r.nodes)
          if (e.kind == Node::Kind::kLoopEnter && e.loop == n.loop) n.end_var = e.end_var;
      }
  }
  uint32_t progress = new_var("progress", DType::kBool);
  assign(progress, simt::Expr::bool_const(true));
  if (profile_) {
    if (roles.size() > static_cast<size_t>(kMaxProfiledRoles))
      return absl::UnimplementedError(absl::StrCat("kernel ", kernel_.name, ": sync profiling supports at most ",
                                                   kMaxProfiledRoles, " roles, it has ", roles.size()));
    for (const RoleProgram& r : roles) profile_->add_role(r.name, r.begin, r.threads);
    profile_->schedule_start(*out_);
  }

  simt::Stmt round;
  round.kind = simt::StmtKind::kWhile;
  round.operands.push_back(var(progress));
  round.comment = "merged schedule of the roles";
  RETURN_IF_ERROR(into(round.body, [&]() -> absl::Status {
    assign(progress, simt::Expr::bool_const(false));
    for (RoleProgram& r : roles) {
      const auto role_index = static_cast<uint32_t>(&r - roles.data());
      role_ = r.name;
      role_begin_ = r.begin;
      role_threads_ = r.threads;
      for (const auto& [loop, v] : r.loop_vars) bound_[loop->as<ForOp>()->var] = var(v);
      uint32_t running = new_var(absl::StrCat("running_", r.name), DType::kBool);
      assign(running, simt::Expr::bool_const(true));
      simt::Stmt steps;
      steps.kind = simt::StmtKind::kWhile;
      steps.operands.push_back(var(running));
      RETURN_IF_ERROR(into(steps.body, [&]() -> absl::Status {
        assign(running, simt::Expr::bool_const(false));
        // if (pc == 0 && ready0) {...} else if (pc == 1 && ready1) {...} ...
        simt::Body* chain = out_;
        for (size_t i = 0; i < r.nodes.size(); ++i) {
          Node& n = r.nodes[i];
          simt::Expr cond = bin(BinaryOp::kEq, var(r.pc), i32(static_cast<int64_t>(i)));
          if (n.wait != nullptr) {
            n.site = add_sync_site(
                n.wait->as<MbarrierWaitOp>() ? absl::StrCat("mbarrier ", kernel_.symbol(n.wait->as<MbarrierWaitOp>()->barrier.barrier).name)
                                             : "named barrier",
                n.wait->loc.line);
            simt::Body cond_prep;
            absl::StatusOr<simt::Expr> ready = absl::InternalError("unset");
            RETURN_IF_ERROR(into(cond_prep, [&] {
              ready = wait_condition(*n.wait);
              return ready.status();
            }));
            if (!cond_prep.empty()) return unsupported(*n.wait, "a wait whose operands read global memory");
            cond = bin(BinaryOp::kAnd, std::move(cond), std::move(*ready));
          }
          simt::Stmt branch;
          branch.kind = simt::StmtKind::kIf;
          branch.operands.push_back(std::move(cond));
          RETURN_IF_ERROR(into(branch.body, [&]() -> absl::Status {
            if (profile_ && n.wait != nullptr) profile_->role_wait_passed(*out_, role_index, n.site);
            tracker_.clear();
            switch (n.kind) {
              case Node::Kind::kRun: {
                for (const Stmt* s : n.stmts) RETURN_IF_ERROR(lower_stmt(*s));
                if (!tracker_.empty()) barrier_now();
                assign(r.pc, i32(static_cast<int64_t>(i + 1)));
                break;
              }
              case Node::Kind::kLoopEnter:
              case Node::Kind::kLoopNext: {
                const ForOp& f = *n.loop->as<ForOp>();
                uint32_t v = r.loop_vars.at(n.loop);
                if (n.kind == Node::Kind::kLoopEnter) {
                  ASSIGN_OR_RETURN(simt::Expr b, expr(f.begin));
                  ASSIGN_OR_RETURN(simt::Expr e, expr(f.end));
                  assign(v, b);
                  assign(n.end_var, e);
                } else {
                  assign(v, add(var(v), i32(1)));
                }
                assign(r.pc, simt::Expr::call(Func::kSelect, {bin(BinaryOp::kLt, var(v), var(n.end_var)),
                                                              i32(n.loop_first), i32(n.loop_exit)}));
                break;
              }
            }
            assign(running, simt::Expr::bool_const(true));
            assign(progress, simt::Expr::bool_const(true));
            return absl::OkStatus();
          }));
          chain->push_back(std::move(branch));
          chain = &chain->back().else_body;
        }
        return absl::OkStatus();
      }));
      emit(std::move(steps));
      if (profile_)
        profile_->role_after_steps(*out_, role_index, bin(BinaryOp::kEq, var(r.pc), i32(static_cast<int64_t>(r.nodes.size()))));
    }
    return absl::OkStatus();
  }));
  emit(std::move(round));

  // Unfinished roles are stuck on waits nothing can complete: report the first two (role and
  // wait each) and stop the block. Every thread computes the same, so the return is uniform.
  constexpr int64_t kNone = kNoSyncSite;
  uint32_t first = new_var("stuck_first", DType::kI32), second = new_var("stuck_second", DType::kI32);
  assign(first, i32(kNone));
  assign(second, i32(kNone));
  for (const RoleProgram& r : roles) {
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      const Node& n = r.nodes[i];
      if (n.wait == nullptr) continue;
      RETURN_IF_ERROR(if_then(bin(BinaryOp::kEq, var(r.pc), i32(static_cast<int64_t>(i))), [&] {
        assign(second, simt::Expr::call(Func::kSelect, {bin(BinaryOp::kEq, var(first), i32(kNone)),
                                                        var(second), i32(n.site)}));
        assign(first, simt::Expr::call(Func::kSelect, {bin(BinaryOp::kEq, var(first), i32(kNone)),
                                                       i32(n.site), var(first)}));
        return absl::OkStatus();
      }));
    }
  }
  RETURN_IF_ERROR(if_then(bin(BinaryOp::kNe, var(first), i32(kNone)), [&]() -> absl::Status {
    RETURN_IF_ERROR(if_then(bin(BinaryOp::kEq, tid(), i32(0)), [&] {
      record_deadlock(var(first), var(second));
      return absl::OkStatus();
    }));
    simt::Stmt ret;
    ret.kind = simt::StmtKind::kReturn;
    emit(std::move(ret));
    return absl::OkStatus();
  }));
  role_ = "block";
  role_begin_ = 0;
  role_threads_ = 0;
  tracker_.clear();
  for (const Stmt* s : post) RETURN_IF_ERROR(lower_stmt(*s));
  return absl::OkStatus();
}

}  // namespace tilert::lowering
