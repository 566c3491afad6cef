#include "frontends/cli/profile_report.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tilert::profile {
namespace {

// Where a role sorts among the roles of a block: the block's own stream first, then roles by
// their first thread (the order they are written in).
int64_t role_order(const cpu::SyncLane& lane) { return lane.role == "block" ? -1 : lane.first_thread; }

double ms(int64_t ns) { return static_cast<double>(ns) * 1e-6; }

}  // namespace

double RoleSummary::idle_ratio() const {
  int64_t total = totals.wait_ns + totals.busy_ns;
  return total > 0 ? static_cast<double>(totals.wait_ns) / static_cast<double>(total) : 0.0;
}

std::vector<RoleSummary> summarize_roles(const std::vector<const cpu::SyncLane*>& lanes) {
  std::map<std::pair<int64_t, std::string>, RoleSummary> by_role;
  std::map<std::string, std::set<std::array<int64_t, 3>>> blocks;
  std::map<std::string, int64_t> order;
  for (const cpu::SyncLane* lane : lanes) {
    auto [it, fresh] = order.try_emplace(lane->role, role_order(*lane));
    if (!fresh) it->second = std::min(it->second, role_order(*lane));
  }
  for (const cpu::SyncLane* lane : lanes) {
    RoleSummary& s = by_role[{order[lane->role], lane->role}];
    s.role = lane->role;
    s.threads = std::max(s.threads, lane->thread_count);
    blocks[lane->role].insert({lane->block[0], lane->block[1], lane->block[2]});
    cpu::LaneTotals t = cpu::lane_totals(*lane);
    s.totals.waits += t.waits;
    s.totals.arrives += t.arrives;
    s.totals.wait_ns += t.wait_ns;
    s.totals.join_ns += t.join_ns;
    s.totals.busy_ns += t.busy_ns;
  }
  std::vector<RoleSummary> out;
  for (auto& [key, s] : by_role) {
    s.blocks = static_cast<int64_t>(blocks[s.role].size());
    out.push_back(std::move(s));
  }
  return out;
}

std::string format_role_table(const std::vector<RoleSummary>& roles) {
  size_t width = 4;
  for (const RoleSummary& r : roles) width = std::max(width, r.role.size());
  int w = static_cast<int>(width);
  std::string out = absl::StrFormat("%-*s %8s %7s %7s %8s %11s %11s %7s\n", w, "role", "threads", "blocks", "waits",
                                    "arrives", "wait ms", "busy ms", "idle");
  for (const RoleSummary& r : roles) {
    absl::StrAppendFormat(&out, "%-*s %8d %7d %7d %8d %11.3f %11.3f %6.1f%%\n", w, r.role, r.threads, r.blocks,
                          r.totals.waits, r.totals.arrives, ms(r.totals.wait_ns), ms(r.totals.busy_ns),
                          100.0 * r.idle_ratio());
  }
  return out;
}

std::string format_overhead(const ProfileResult& result) {
  return absl::StrFormat("overhead: instrumented %.3f ms, uninstrumented %.3f ms (%+.1f%%), "
                         "fastest of %d launch%s each",
                         result.instrumented_seconds * 1e3, result.uninstrumented_seconds * 1e3,
                         100.0 * result.overhead(), result.repeat, result.repeat == 1 ? "" : "es");
}

std::string block_label(const int64_t block[3]) {
  return absl::StrCat("block (", block[0], ",", block[1], ",", block[2], ")");
}

std::vector<TimelineRow> timeline_rows(const std::vector<const cpu::SyncLane*>& lanes) {
  using BlockKey = std::tuple<int64_t, int64_t, int64_t>;  // (z, y, x)
  std::map<BlockKey, std::map<std::pair<int64_t, std::string>, TimelineRow>> blocks;
  std::map<std::pair<BlockKey, std::string>, int64_t> order;
  for (const cpu::SyncLane* lane : lanes) {
    BlockKey key{lane->block[2], lane->block[1], lane->block[0]};
    auto [it, fresh] = order.try_emplace({key, lane->role}, role_order(*lane));
    if (!fresh) it->second = std::min(it->second, role_order(*lane));
  }
  for (const cpu::SyncLane* lane : lanes) {
    BlockKey key{lane->block[2], lane->block[1], lane->block[0]};
    TimelineRow& row = blocks[key][{order[{key, lane->role}], lane->role}];
    std::copy(lane->block, lane->block + 3, row.block);
    row.role = lane->role;
    row.runs.push_back(lane);
  }
  std::vector<TimelineRow> out;
  int64_t block_ordinal = 0;
  for (auto& [key, rows] : blocks) {
    int64_t lane_ordinal = 0;
    for (auto& [role_key, row] : rows) {
      row.block_ordinal = block_ordinal;
      row.lane_ordinal = lane_ordinal++;
      out.push_back(std::move(row));
    }
    ++block_ordinal;
  }
  return out;
}

}  // namespace tilert::profile
