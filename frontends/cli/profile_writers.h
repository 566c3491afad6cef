// The files `tilert profile` writes from the timeline rows (profile_report.h): a Chrome trace
// (JSON, loadable in Perfetto and chrome://tracing) and a self-contained SVG timeline.
#pragma once

#include <string>
#include <vector>

#include "frontends/cli/profile_report.h"

namespace tilert::profile {

// {"traceEvents": [...]}: pid = block, tid = role lane, "M" metadata naming processes after
// blocks and threads after roles, "X" complete events for each task run (cat "task"), wait
// (cat "wait") and arrive (cat "arrive"); times in microseconds since the trace started.
std::string chrome_trace_json(const std::vector<TimelineRow>& rows, const std::string& kernel_name);

// One lane per row: busy spans, hatched wait spans and grey join spans (the block waiting for
// its roles), arrive ticks, each with a <title> tooltip naming the barrier; a time axis on top.
std::string svg_timeline(const std::vector<TimelineRow>& rows, const std::string& kernel_name);

}  // namespace tilert::profile
