// What `tilert profile` prints and writes, from a sync trace's lanes (backends/cpu/sync_trace.h):
// the per-role table, the overhead line, and the row layout the Chrome trace and the SVG share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/sync_trace.h"
#include "frontends/cli/profile_run.h"

namespace tilert::profile {

// One role summed over every block (and every run of the role, when roles sit in a loop).
struct RoleSummary {
  std::string role;
  int64_t threads = 0;  // threads of the role (of one block)
  int64_t blocks = 0;   // blocks that ran it
  cpu::LaneTotals totals;

  // wait / (wait + busy); 0 when the role spent no time at all.
  double idle_ratio() const;
};

// Rows in the order of the role's first thread: "block" (the block's own statements) first.
std::vector<RoleSummary> summarize_roles(const std::vector<const cpu::SyncLane*>& lanes);

// "role  threads  blocks  waits  arrives  wait ms  busy ms  idle" and one line per role.
std::string format_role_table(const std::vector<RoleSummary>& roles);

// "overhead: instrumented 12.300 ms, uninstrumented 11.000 ms (+11.8%), fastest of 2 launches each"
std::string format_overhead(const ProfileResult& result);

// One timeline row: one role of one block, with every run of it.
struct TimelineRow {
  int64_t block[3] = {0, 0, 0};
  int64_t block_ordinal = 0;  // the Chrome trace's pid
  int64_t lane_ordinal = 0;   // within the block: the Chrome trace's tid
  std::string role;
  std::vector<const cpu::SyncLane*> runs;
};

// Blocks in (z, y, x) order, roles within a block by their first thread.
std::vector<TimelineRow> timeline_rows(const std::vector<const cpu::SyncLane*>& lanes);

// "block (1,0,0)"
std::string block_label(const int64_t block[3]);

}  // namespace tilert::profile
