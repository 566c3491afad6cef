#include <nlohmann/json.hpp>

#include "frontends/cli/profile_writers.h"

namespace tilert::profile {
namespace {

double us(int64_t ns) { return static_cast<double>(ns) * 1e-3; }

nlohmann::json complete_event(const TimelineRow& row, const std::string& name, const char* category,
                              int64_t start_ns, int64_t end_ns) {
  return {{"ph", "X"},           {"name", name},  {"cat", category},
          {"pid", row.block_ordinal}, {"tid", row.lane_ordinal}, {"ts", us(start_ns)},
          {"dur", us(end_ns - start_ns)}};
}

nlohmann::json metadata_event(const char* name, int64_t pid, const nlohmann::json* tid, nlohmann::json args) {
  nlohmann::json e = {{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
  if (tid != nullptr) e["tid"] = *tid;
  return e;
}

}  // namespace

std::string chrome_trace_json(const std::vector<TimelineRow>& rows, const std::string& kernel_name) {
  nlohmann::json events = nlohmann::json::array();
  int64_t named_block = -1;
  for (const TimelineRow& row : rows) {
    if (row.block_ordinal != named_block) {
      named_block = row.block_ordinal;
      events.push_back(metadata_event("process_name", row.block_ordinal, nullptr,
                                      {{"name", block_label(row.block)}}));
      events.push_back(metadata_event("process_sort_index", row.block_ordinal, nullptr,
                                      {{"sort_index", row.block_ordinal}}));
    }
    nlohmann::json tid = row.lane_ordinal;
    events.push_back(metadata_event("thread_name", row.block_ordinal, &tid, {{"name", row.role}}));
    events.push_back(metadata_event("thread_sort_index", row.block_ordinal, &tid, {{"sort_index", row.lane_ordinal}}));
    for (const cpu::SyncLane* run : row.runs) {
      nlohmann::json task = complete_event(row, run->task, "task", run->start_ns, run->end_ns);
      cpu::LaneTotals totals = cpu::lane_totals(*run);
      task["args"] = {{"waits", totals.waits}, {"wait_us", us(totals.wait_ns)}, {"busy_us", us(totals.busy_ns)},
                      {"join_us", us(totals.join_ns)}};
      events.push_back(std::move(task));
      for (const cpu::SyncEvent& e : run->events) {
        bool wait = e.kind == cpu::SyncEventKind::kWait;
        nlohmann::json event = complete_event(row, e.name, wait ? "wait" : "arrive", e.start_ns, e.end_ns);
        event["args"] = {{"threads", e.threads}};
        events.push_back(std::move(event));
      }
    }
  }
  nlohmann::json trace = {{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ns"},
                          {"otherData", {{"kernel", kernel_name}, {"device", "cpu"}, {"clock", "steady_clock"}}}};
  return trace.dump() + "\n";
}

}  // namespace tilert::profile
