#include "lowering/sync_profile.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tilert::lowering {

using simt::Expr;
using simt::Stmt;
using simt::StmtKind;

namespace {

Expr i32(int64_t v) { return Expr::int_const(v); }
Expr builtin(simt::Builtin b) { return Expr::builtin(b); }

Stmt if_stmt(Expr cond, simt::Body body, simt::Body else_body = {}) {
  Stmt s;
  s.kind = StmtKind::kIf;
  s.operands.push_back(std::move(cond));
  s.body = std::move(body);
  s.else_body = std::move(else_body);
  return s;
}

Stmt assign(uint32_t v, Expr value) {
  Stmt s;
  s.kind = StmtKind::kAssign;
  s.id = v;
  s.operands.push_back(std::move(value));
  return s;
}

Expr low32(Expr v) { return Expr::cast(DType::kU32, std::move(v)); }
Expr high32(Expr v) { return Expr::cast(DType::kU32, Expr::binary(BinaryOp::kShr, std::move(v), Expr::int_const(32, DType::kI64))); }

int64_t subgroup_lanes(const simt::Function& f) {
  return std::count_if(f.profile_lanes.begin(), f.profile_lanes.end(), [](const simt::ProfileLane& l) { return !l.is_role; });
}

}  // namespace

int64_t profile_region_words(const simt::Function& f) {
  return kBlockHeaderWords + (subgroup_lanes(f) + kMaxProfiledRoles) * kLaneWords;
}

int64_t profile_words(const simt::Function& f) { return kProfiledBlocks * profile_region_words(f); }

SyncProfileEmitter::SyncProfileEmitter(simt::Function& f, int64_t threads, int64_t subgroup_size)
    : f_(f), threads_(threads), subgroup_size_(std::max<int64_t>(subgroup_size, 1)) {
  subgroups_ = (threads_ + subgroup_size_ - 1) / subgroup_size_;
  f_.profile_param = static_cast<int32_t>(f_.params.size());
  f_.params.push_back({"sync_profile", true, DType::kU32, true});
  for (int64_t s = 0; s < subgroups_; ++s)
    f_.profile_lanes.push_back({absl::StrCat("subgroup-", s), false, s * subgroup_size_,
                                std::min(subgroup_size_, threads_ - s * subgroup_size_)});
  f_.uses_subgroup_ops = true;  // lane and subgroup index pick the recording lane
  enabled_ = new_var("prof_enabled", DType::kBool);
  base_ = new_var("prof_base", DType::kI32);
  warp_count_ = new_var("prof_count", DType::kI32);
  temp_ = new_var("prof_start", DType::kI64);
}

Expr SyncProfileEmitter::var(uint32_t id) const { return Expr::var(id, f_.variables[id].type); }

uint32_t SyncProfileEmitter::new_var(std::string name, DType type) {
  f_.variables.push_back({std::move(name), type, 0});
  return static_cast<uint32_t>(f_.variables.size() - 1);
}

Stmt SyncProfileEmitter::store(Expr word, Expr value) const {
  Stmt s;
  s.kind = StmtKind::kStore;
  s.space = simt::Space::kGlobal;
  s.id = static_cast<uint32_t>(f_.profile_param);
  s.operands = {Expr::binary(BinaryOp::kAdd, var(base_), std::move(word)), low32(std::move(value))};
  return s;
}

Expr SyncProfileEmitter::lane_word(Expr lane, int64_t word) const {
  return Expr::binary(BinaryOp::kAdd, Expr::binary(BinaryOp::kMul, std::move(lane), i32(kLaneWords)),
                      i32(kBlockHeaderWords + word));
}

void SyncProfileEmitter::record(simt::Body& out, Expr lane, uint32_t count, Expr writer, uint32_t site, Expr start,
                                Expr end) {
  simt::Body room;
  Expr first = Expr::binary(BinaryOp::kAdd, lane_word(lane, kLaneHeaderWords),
                            Expr::binary(BinaryOp::kMul, var(count), i32(kRecordWords)));
  room.push_back(store(first, Expr::int_const(site, DType::kU32)));
  room.push_back(store(Expr::binary(BinaryOp::kAdd, first, i32(1)), std::move(start)));
  room.push_back(store(Expr::binary(BinaryOp::kAdd, first, i32(2)), std::move(end)));
  simt::Body body;
  body.push_back(if_stmt(Expr::binary(BinaryOp::kLt, var(count), i32(kLaneRecords)), std::move(room)));
  body.push_back(assign(count, Expr::binary(BinaryOp::kAdd, var(count), i32(1))));
  body.push_back(store(lane_word(lane, 0), var(count)));
  out.push_back(if_stmt(Expr::binary(BinaryOp::kAnd, var(enabled_), std::move(writer)), std::move(body)));
}

uint32_t SyncProfileEmitter::add_role(const std::string& name, int64_t first_thread, int64_t threads) {
  RoleVars r;
  r.lane = static_cast<uint32_t>(f_.profile_lanes.size());
  f_.profile_lanes.push_back({name, true, first_thread, threads});
  r.count = new_var(absl::StrCat("prof_count_", name), DType::kI32);
  r.blocked = new_var(absl::StrCat("prof_blocked_", name), DType::kBool);
  r.since = new_var(absl::StrCat("prof_since_", name), DType::kI64);
  r.done = new_var(absl::StrCat("prof_done_", name), DType::kBool);
  roles_.push_back(r);
  return static_cast<uint32_t>(roles_.size() - 1);
}

void SyncProfileEmitter::schedule_start(simt::Body& out) {
  out.push_back(assign(temp_, builtin(simt::Builtin::kCycles)));
  simt::Body starts;
  for (const RoleVars& r : roles_) {
    out.push_back(assign(r.count, i32(0)));
    out.push_back(assign(r.blocked, Expr::bool_const(false)));
    out.push_back(assign(r.done, Expr::bool_const(false)));
    out.push_back(assign(r.since, var(temp_)));
    starts.push_back(store(lane_word(i32(r.lane), 1), var(temp_)));
  }
  Expr thread0 = Expr::binary(BinaryOp::kEq, builtin(simt::Builtin::kLocalId), i32(0));
  out.push_back(if_stmt(Expr::binary(BinaryOp::kAnd, var(enabled_), thread0), std::move(starts)));
}

void SyncProfileEmitter::role_wait_passed(simt::Body& out, uint32_t role, uint32_t site) {
  const RoleVars& r = roles_.at(role);
  out.push_back(assign(temp_, builtin(simt::Builtin::kCycles)));
  // A wait satisfied at once takes no time: it starts now.
  out.push_back(assign(r.since, Expr::call(Func::kSelect, {var(r.blocked), var(r.since), var(temp_)})));
  out.push_back(assign(r.blocked, Expr::bool_const(false)));
  record(out, i32(r.lane), r.count, Expr::binary(BinaryOp::kEq, builtin(simt::Builtin::kLocalId), i32(0)), site,
         var(r.since), var(temp_));
}

void SyncProfileEmitter::role_after_steps(simt::Body& out, uint32_t role, Expr finished) {
  const RoleVars& r = roles_.at(role);
  simt::Body block_starts;
  block_starts.push_back(assign(r.blocked, Expr::bool_const(true)));
  block_starts.push_back(assign(r.since, builtin(simt::Builtin::kCycles)));
  simt::Body not_finished;
  not_finished.push_back(if_stmt(var(r.blocked), {}, std::move(block_starts)));

  simt::Body ends;
  ends.push_back(assign(r.done, Expr::bool_const(true)));
  simt::Body write_end;
  write_end.push_back(store(lane_word(i32(r.lane), 2), builtin(simt::Builtin::kCycles)));
  Expr thread0 = Expr::binary(BinaryOp::kEq, builtin(simt::Builtin::kLocalId), i32(0));
  ends.push_back(if_stmt(Expr::binary(BinaryOp::kAnd, var(enabled_), thread0), std::move(write_end)));
  simt::Body is_finished;
  is_finished.push_back(if_stmt(var(r.done), {}, std::move(ends)));
  out.push_back(if_stmt(std::move(finished), std::move(is_finished), std::move(not_finished)));
}

void SyncProfileEmitter::instrument_barriers(simt::Body& body) {
  simt::Body out;
  for (Stmt& s : body) {
    instrument_barriers(s.body);
    instrument_barriers(s.else_body);
    const bool waits = s.kind == StmtKind::kBarrier &&
                       (s.barrier == simt::BarrierKind::kWorkgroup || s.barrier == simt::BarrierKind::kNamed);
    if (!waits) {
      out.push_back(std::move(s));
      continue;
    }
    std::string name = s.barrier == simt::BarrierKind::kWorkgroup ? "workgroup barrier" : "named barrier";
    if (!s.comment.empty()) absl::StrAppend(&name, " (", s.comment, ")");
    f_.sync_sites.push_back({std::move(name), "block", 0});
    const auto site = static_cast<uint32_t>(f_.sync_sites.size() - 1);
    out.push_back(assign(temp_, builtin(simt::Builtin::kCycles)));
    out.push_back(std::move(s));
    record(out, builtin(simt::Builtin::kSubgroupId), warp_count_,
           Expr::binary(BinaryOp::kEq, builtin(simt::Builtin::kSubgroupLane), i32(0)), site, var(temp_),
           builtin(simt::Builtin::kCycles));
  }
  body = std::move(out);
}

void SyncProfileEmitter::finish(Expr block_linear) {
  instrument_barriers(f_.body);
  const Expr thread0 = Expr::binary(BinaryOp::kEq, builtin(simt::Builtin::kLocalId), i32(0));
  const Expr lane0 = Expr::binary(BinaryOp::kEq, builtin(simt::Builtin::kSubgroupLane), i32(0));
  const Expr subgroup = builtin(simt::Builtin::kSubgroupId);

  // Block start: which region, the clocks, each subgroup's lane start.
  simt::Body prologue;
  prologue.push_back(assign(base_, std::move(block_linear)));
  prologue.push_back(assign(enabled_, Expr::binary(BinaryOp::kLt, var(base_), i32(kProfiledBlocks))));
  prologue.push_back(assign(base_, Expr::call(Func::kSelect, {var(enabled_),
                                                             Expr::binary(BinaryOp::kMul, var(base_), i32(profile_region_words(f_))),
                                                             i32(0)})));
  prologue.push_back(assign(warp_count_, i32(0)));
  auto clocks = [&](int64_t first_word) {
    simt::Body b;
    b.push_back(assign(temp_, builtin(simt::Builtin::kClock)));
    b.push_back(store(i32(first_word), var(temp_)));
    b.push_back(store(i32(first_word + 1), high32(var(temp_))));
    b.push_back(assign(temp_, builtin(simt::Builtin::kCycles)));
    b.push_back(store(i32(first_word + 2), var(temp_)));
    b.push_back(store(i32(first_word + 3), high32(var(temp_))));
    return b;
  };
  simt::Body start;
  start.push_back(if_stmt(thread0, clocks(0)));
  start.push_back(if_stmt(lane0, {store(lane_word(subgroup, 1), builtin(simt::Builtin::kCycles))}));
  prologue.push_back(if_stmt(var(enabled_), std::move(start)));
  f_.body.insert(f_.body.begin(), prologue.begin(), prologue.end());

  simt::Body end;
  end.push_back(if_stmt(lane0, {store(lane_word(subgroup, 2), builtin(simt::Builtin::kCycles))}));
  end.push_back(if_stmt(thread0, clocks(4)));
  f_.body.push_back(if_stmt(var(enabled_), std::move(end)));
}

// ---- decoding ----

absl::StatusOr<std::vector<ProfiledLane>> decode_sync_profile(const simt::Function& f, std::span<const uint32_t> words,
                                                             int64_t blocks) {
  if (f.profile_param < 0)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", f.name, " was not lowered with sync profiling"));
  if (static_cast<int64_t>(words.size()) != profile_words(f))
    return absl::InvalidArgumentError(absl::StrCat("kernel ", f.name, ": sync profile of ", words.size(),
                                                   " words, expected ", profile_words(f)));
  const int64_t region = profile_region_words(f);
  const int64_t recorded = std::min(blocks, kProfiledBlocks);
  auto u64 = [](const uint32_t* w) { return static_cast<int64_t>(w[0] | static_cast<uint64_t>(w[1]) << 32); };

  // Cycles per nanosecond over every block that finished: one clock rate for the launch.
  double cycles = 0, ns = 0;
  for (int64_t b = 0; b < recorded; ++b) {
    const uint32_t* h = words.data() + b * region;
    int64_t t0 = u64(h), c0 = u64(h + 2), t1 = u64(h + 4), c1 = u64(h + 6);
    if (t1 > t0 && c1 > c0) {
      cycles += static_cast<double>(c1 - c0);
      ns += static_cast<double>(t1 - t0);
    }
  }
  if (ns <= 0)
    return absl::FailedPreconditionError(absl::StrCat("kernel ", f.name, ": no profiled block finished, so its cycle "
                                                      "counts cannot be turned into time"));
  const double rate = cycles / ns;

  std::vector<ProfiledLane> lanes;
  for (int64_t b = 0; b < recorded; ++b) {
    const uint32_t* h = words.data() + b * region;
    const int64_t t0 = u64(h), c0 = u64(h + 2);
    if (t0 == 0 && c0 == 0) continue;  // the block never started recording
    // Other subgroups may read the counter a little before thread 0 reads c0: the 32-bit
    // difference is signed (a block spans well under 2^31 cycles).
    auto time = [&](uint32_t low) {
      int64_t c = c0 + static_cast<int32_t>(low - static_cast<uint32_t>(c0));
      return t0 + static_cast<int64_t>(static_cast<double>(c - c0) / rate);
    };
    for (size_t l = 0; l < f.profile_lanes.size(); ++l) {
      const uint32_t* w = h + kBlockHeaderWords + static_cast<int64_t>(l) * kLaneWords;
      if (w[0] == 0 && w[1] == 0 && w[2] == 0) continue;
      ProfiledLane lane;
      lane.block_linear = b;
      lane.lane = static_cast<uint32_t>(l);
      lane.start_ns = time(w[1]);
      const int64_t kept = std::min<int64_t>(w[0], kLaneRecords);
      lane.dropped = static_cast<int64_t>(w[0]) - kept;
      for (int64_t r = 0; r < kept; ++r) {
        const uint32_t* rec = w + kLaneHeaderWords + r * kRecordWords;
        if (rec[0] >= f.sync_sites.size())
          return absl::DataLossError(absl::StrCat("kernel ", f.name, ": sync profile names site ", rec[0], " of ",
                                                  f.sync_sites.size()));
        lane.waits.push_back({rec[0], time(rec[1]), time(rec[2])});
      }
      // A lane that never reached its end (the block stopped early) ends at its last wait.
      lane.end_ns = w[2] != 0 ? time(w[2]) : lane.start_ns;
      for (const ProfiledWait& wait : lane.waits) lane.end_ns = std::max(lane.end_ns, wait.end_ns);
      lanes.push_back(std::move(lane));
    }
  }
  return lanes;
}

}  // namespace tilert::lowering
