#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "frontends/cli/profile_writers.h"

namespace tilert::profile {
namespace {

constexpr double kLabelWidth = 230;  // left column: "block (0,0,0) producer"
constexpr double kPlotWidth = 960;
constexpr double kAxisHeight = 48;   // title and time axis above the lanes
constexpr double kLaneHeight = 22;
constexpr double kLaneGap = 6;
constexpr double kLegendHeight = 28;
constexpr int kTargetTicks = 8;

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// "1.25 ms" / "40 us" / "800 ns": the unit that keeps the number short.
std::string format_ns(double ns) {
  if (std::abs(ns) >= 1e6) return absl::StrFormat("%g ms", ns * 1e-6);
  if (std::abs(ns) >= 1e3) return absl::StrFormat("%g us", ns * 1e-3);
  return absl::StrFormat("%g ns", ns);
}

// A round tick spacing (1, 2 or 5 times a power of ten) giving about kTargetTicks ticks.
double tick_step(double span_ns) {
  double raw = std::max(span_ns / kTargetTicks, 1.0);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10.0 * power;
}

// Maps trace times onto the plot's x coordinates.
struct TimeScale {
  int64_t begin_ns = 0;
  int64_t end_ns = 1;
  double x(int64_t ns) const {
    return kLabelWidth + kPlotWidth * static_cast<double>(ns - begin_ns) / static_cast<double>(end_ns - begin_ns);
  }
};

TimeScale time_scale(const std::vector<TimelineRow>& rows) {
  int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
  for (const TimelineRow& row : rows)
    for (const cpu::SyncLane* run : row.runs) {
      begin = std::min(begin, run->start_ns);
      end = std::max(end, run->end_ns);
    }
  if (begin > end) return {};
  return {begin, std::max(end, begin + 1)};
}

// A span of at least half a pixel, so that short waits stay visible.
void append_span(std::string* out, const TimeScale& scale, double y, int64_t start_ns, int64_t end_ns,
                 std::string_view css_class, std::string_view title) {
  double x0 = scale.x(start_ns), x1 = std::max(scale.x(end_ns), x0 + 0.5);
  absl::StrAppendFormat(out, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.0f\">"
                        "<title>%s</title></rect>\n",
                        css_class, x0, y, x1 - x0, kLaneHeight, xml_escape(title));
}

void append_axis(std::string* out, const TimeScale& scale, double bottom) {
  double span = static_cast<double>(scale.end_ns - scale.begin_ns);
  double step = tick_step(span);
  absl::StrAppendFormat(out, "<g class=\"axis\">\n<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\"/>\n",
                        kLabelWidth, kAxisHeight - 8, kLabelWidth + kPlotWidth, kAxisHeight - 8);
  for (double t = 0; t <= span + 0.5; t += step) {
    double x = scale.x(scale.begin_ns + static_cast<int64_t>(t));
    absl::StrAppendFormat(out, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\"/>\n", x,
                          kAxisHeight - 12, x, bottom);
    absl::StrAppendFormat(out, "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", x, kAxisHeight - 16,
                          xml_escape(format_ns(t)));
  }
  absl::StrAppend(out, "</g>\n");
}

void append_lane(std::string* out, const TimeScale& scale, const TimelineRow& row, double y) {
  absl::StrAppendFormat(out, "<g class=\"lane\" data-block=\"%s\" data-role=\"%s\">\n",
                        xml_escape(block_label(row.block)), xml_escape(row.role));
  absl::StrAppendFormat(out, "<text x=\"8\" y=\"%.2f\">%s %s</text>\n", y + kLaneHeight * 0.7,
                        xml_escape(block_label(row.block)), xml_escape(row.role));
  for (const cpu::SyncLane* run : row.runs) {
    cpu::LaneTotals totals = cpu::lane_totals(*run);
    append_span(out, scale, y, run->start_ns, run->end_ns, "busy",
                absl::StrCat(run->task, ": busy ", format_ns(static_cast<double>(totals.busy_ns)), ", waiting ",
                             format_ns(static_cast<double>(totals.wait_ns)), " in ", totals.waits, " waits"));
    for (const auto& [begin, end] : run->child_spans)
      append_span(out, scale, y, begin, end, "join", "waiting for its roles to finish");
    for (const cpu::SyncEvent& e : run->events) {
      if (e.kind == cpu::SyncEventKind::kWait) {
        append_span(out, scale, y, e.start_ns, e.end_ns, "wait",
                    absl::StrCat("wait: ", e.name, " (", format_ns(static_cast<double>(e.end_ns - e.start_ns)), ", ",
                                 e.threads, " threads)"));
        continue;
      }
      double x = scale.x(e.start_ns);
      absl::StrAppendFormat(out, "<line class=\"arrive\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\">"
                            "<title>%s</title></line>\n",
                            x, y, x, y + kLaneHeight, xml_escape(absl::StrCat(e.name, " (", e.threads, " threads)")));
    }
  }
  absl::StrAppend(out, "</g>\n");
}

void append_legend(std::string* out, double y) {
  const struct {
    const char* css_class;
    const char* text;
  } entries[] = {{"busy", "busy"}, {"wait", "sync wait"}, {"join", "waiting for roles"}};
  double x = kLabelWidth;
  for (const auto& e : entries) {
    absl::StrAppendFormat(out, "<rect class=\"%s\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\"/>\n", e.css_class,
                          x, y);
    absl::StrAppendFormat(out, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x + 20, y + 12, e.text);
    x += 160;
  }
}

}  // namespace

std::string svg_timeline(const std::vector<TimelineRow>& rows, const std::string& kernel_name) {
  TimeScale scale = time_scale(rows);
  double lanes_bottom = kAxisHeight + static_cast<double>(rows.size()) * (kLaneHeight + kLaneGap);
  double width = kLabelWidth + kPlotWidth + 40, height = lanes_bottom + kLegendHeight + 8;
  std::string out = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height, width, height);
  absl::StrAppend(&out,
                  "<defs>\n<pattern id=\"wait-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\">\n<rect width=\"6\" height=\"6\" fill=\"#f4b183\"/>\n"
                  "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c55a11\" stroke-width=\"3\"/>\n</pattern>\n"
                  "<style>\n.busy { fill: #9dc3e6; }\n.wait { fill: url(#wait-hatch); }\n"
                  ".join { fill: #d9d9d9; }\n.arrive { stroke: #375623; stroke-width: 1.5; }\n"
                  ".axis line { stroke: #404040; }\n.axis .grid { stroke: #e0e0e0; }\n</style>\n</defs>\n");
  absl::StrAppendFormat(&out, "<title>sync profile of kernel %s (cpu)</title>\n", xml_escape(kernel_name));
  absl::StrAppendFormat(&out,
                        "<text x=\"8\" y=\"16\" font-weight=\"bold\">kernel %s: sync waits per role (cpu)</text>\n",
                        xml_escape(kernel_name));
  append_axis(&out, scale, lanes_bottom);
  double y = kAxisHeight;
  for (const TimelineRow& row : rows) {
    append_lane(&out, scale, row, y);
    y += kLaneHeight + kLaneGap;
  }
  append_legend(&out, lanes_bottom + 6);
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace tilert::profile
