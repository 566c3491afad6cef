// The sync profiler as a library: the trace the CPU backend records (backends/cpu/sync_trace.h),
// and the table, Chrome trace and SVG written from it (frontends/cli/profile_*.cc).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontends/cli/cli_common.h"
#include "frontends/cli/profile_report.h"
#include "frontends/cli/profile_run.h"
#include "frontends/cli/profile_writers.h"
#include "tests/profile/xml_check.h"

namespace tilert::profile {
namespace {

using testing::xml_problem;

// One profiled launch of the first kernel of a source file, with `sizes` ("M=128,N=128").
struct Profiled {
  cli::InputModule input;
  const Kernel* kernel = nullptr;
  ProfileResult result;
  std::vector<const cpu::SyncLane*> lanes;
};

Profiled profile_file(const std::string& relative_path, const std::string& sizes) {
  Profiled p;
  absl::StatusOr<cli::InputModule> input =
      cli::read_input_module(std::string(TILERT_SOURCE_DIR) + "/" + relative_path);
  REQUIRE_MESSAGE(input.ok(), input.status().ToString());
  p.input = std::move(*input);
  p.kernel = &p.input.module.kernels.at(0);
  absl::StatusOr<std::vector<check::SizeSetting>> settings = check::parse_size_list(sizes);
  REQUIRE(settings.ok());
  absl::StatusOr<std::vector<check::ScalarValue>> scalars = check::resolve_scalar_values(*p.kernel, *settings);
  REQUIRE_MESSAGE(scalars.ok(), scalars.status().ToString());
  ProfileOptions options;
  options.repeat = 1;
  absl::StatusOr<ProfileResult> result = profile_cpu_launch(*p.kernel, *scalars, options);
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  p.result = std::move(*result);
  p.lanes = p.result.trace->lanes();
  return p;
}

// The wait events of every lane, by role.
using EventsByRole = std::map<std::string, std::vector<const cpu::SyncEvent*>>;

EventsByRole waits_by_role(const std::vector<const cpu::SyncLane*>& lanes) {
  EventsByRole out;
  for (const cpu::SyncLane* lane : lanes)
    for (const cpu::SyncEvent& e : lane->events)
      if (e.kind == cpu::SyncEventKind::kWait) out[lane->role].push_back(&e);
  return out;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// gemm_ws with one block (M = N = 128) and K = 96: three steps around a two-stage ring.
const char* const kGemmWs = "examples/gemm_ws.tile";
const char* const kGemmWsSizes = "M=128,N=128,K=96";

TEST_CASE("gemm_ws: one lane per task; each role waits on its mbarriers in order") {
  Profiled p = profile_file(kGemmWs, kGemmWsSizes);
  REQUIRE(p.lanes.size() == 3);  // the block's stream, producer, consumer
  std::map<std::string, const cpu::SyncLane*> by_role;
  for (const cpu::SyncLane* lane : p.lanes) by_role[lane->role] = lane;
  REQUIRE(by_role.count("block") == 1);
  REQUIRE(by_role.count("producer") == 1);
  REQUIRE(by_role.count("consumer") == 1);
  const cpu::SyncLane& producer = *by_role["producer"];
  const cpu::SyncLane& consumer = *by_role["consumer"];
  CHECK(producer.first_thread == 0);
  CHECK(producer.thread_count == 128);
  CHECK(consumer.first_thread == 128);
  CHECK(consumer.thread_count == 128);
  CHECK(by_role["block"]->thread_count == 256);

  // Producer: per step a wait on empty, then an arrive_expect_tx on full; consumer: a wait on
  // full, then an arrive on empty.
  REQUIRE(producer.events.size() == 6);
  CHECK(producer.events[0].kind == cpu::SyncEventKind::kWait);
  CHECK(producer.events[0].name == "mbarrier empty[0] parity 1 at line 20");
  CHECK(producer.events[1].kind == cpu::SyncEventKind::kArrive);
  CHECK(producer.events[1].name == "arrive_expect_tx full[0] bytes 16384 at line 21");
  CHECK(producer.events[4].name == "mbarrier empty[0] parity 0 at line 20");
  REQUIRE(consumer.events.size() == 6);
  CHECK(consumer.events[0].name == "mbarrier full[0] parity 0 at line 30");
  CHECK(consumer.events[1].name == "arrive empty[0] at line 32");
  CHECK(consumer.events[1].threads == 128);
  CHECK(consumer.events[5].name == "arrive empty[0] at line 32");

  for (const cpu::SyncLane* lane : p.lanes) {
    CHECK(lane->start_ns <= lane->end_ns);
    for (const cpu::SyncEvent& e : lane->events) {
      CHECK(e.start_ns >= lane->start_ns);
      CHECK(e.end_ns >= e.start_ns);
      CHECK(e.end_ns <= lane->end_ns);
    }
  }
  // The block waits for its roles the whole time they run: their spans are its join time.
  cpu::LaneTotals block = cpu::lane_totals(*by_role["block"]);
  CHECK(by_role["block"]->child_spans.size() == 2);
  CHECK(block.waits == 0);
  CHECK(block.join_ns >= producer.end_ns - producer.start_ns);
  CHECK(block.join_ns >= consumer.end_ns - consumer.start_ns);
}

TEST_CASE("gemm_ws: the role table lists both roles with their waits") {
  Profiled p = profile_file(kGemmWs, kGemmWsSizes);
  std::vector<RoleSummary> roles = summarize_roles(p.lanes);
  REQUIRE(roles.size() == 3);
  CHECK(roles[0].role == "block");
  CHECK(roles[1].role == "producer");
  CHECK(roles[2].role == "consumer");
  for (size_t i = 1; i < 3; ++i) {
    CHECK(roles[i].totals.waits == 3);
    CHECK(roles[i].totals.arrives == 3);
    CHECK(roles[i].threads == 128);
    CHECK(roles[i].blocks == 1);
    CHECK(roles[i].idle_ratio() >= 0.0);
    CHECK(roles[i].idle_ratio() <= 1.0);
  }
  std::string table = format_role_table(roles);
  // Every row: role, threads, blocks, waits, arrives, wait ms, busy ms, idle.
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);
  CHECK(line.find("waits") != std::string::npos);
  std::map<std::string, int> waits;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string role;
    int threads = 0, blocks = 0, wait_count = -1;
    fields >> role >> threads >> blocks >> wait_count;
    waits[role] = wait_count;
  }
  CHECK(waits["producer"] == 3);
  CHECK(waits["consumer"] == 3);
  CHECK(waits["block"] == 0);

  CHECK(p.result.instrumented_seconds > 0.0);
  CHECK(p.result.uninstrumented_seconds > 0.0);
  std::string overhead = format_overhead(p.result);
  CHECK(overhead.find("overhead: instrumented ") == 0);
  CHECK(overhead.find("fastest of 1 launch each") != std::string::npos);
}

TEST_CASE("gemm_ws: the Chrome trace names one lane per role, each with its waits") {
  Profiled p = profile_file(kGemmWs, kGemmWsSizes);
  nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(timeline_rows(p.lanes), p.kernel->name));
  REQUIRE(trace.contains("traceEvents"));
  std::map<std::pair<int64_t, int64_t>, std::string> lane_names;
  std::map<std::string, int> names_seen;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      std::string role = e["args"]["name"];
      lane_names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = role;
      ++names_seen[role];
    }
  }
  CHECK(names_seen["producer"] == 1);
  CHECK(names_seen["consumer"] == 1);
  CHECK(names_seen["block"] == 1);
  std::map<std::string, int> waits;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    auto lane = lane_names.find({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
    REQUIRE(lane != lane_names.end());
    CHECK(e["dur"].get<double>() >= 0.0);
    CHECK(e["ts"].get<double>() >= 0.0);
    if (e["cat"] == "wait") {
      ++waits[lane->second];
      CHECK(e["name"].get<std::string>().find("mbarrier ") == 0);
      CHECK(e["args"]["threads"] == 128);
    }
  }
  CHECK(waits["producer"] == 3);
  CHECK(waits["consumer"] == 3);
  CHECK(waits["block"] == 0);
}

TEST_CASE("gemm_ws: the SVG is well-formed XML with one lane per role and block") {
  Profiled p = profile_file(kGemmWs, "M=128,N=256,K=64");  // two blocks
  std::string svg = svg_timeline(timeline_rows(p.lanes), p.kernel->name);
  CHECK(xml_problem(svg) == "");
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  for (const char* block : {"block (0,0,0)", "block (1,0,0)"}) {
    for (const char* role : {"block", "producer", "consumer"}) {
      std::string lane = std::string("data-block=\"") + block + "\" data-role=\"" + role + "\"";
      CHECK_MESSAGE(count(svg, lane) == 1, lane);
    }
  }
  CHECK(count(svg, "<g class=\"lane\"") == 6);
  // Two waits per role and block, each a hatched span named in its tooltip.
  CHECK(count(svg, "<title>wait: ") == 8);
  CHECK(count(svg, "<title>wait: mbarrier full[0] parity 0 at line 30") == 2);
  CHECK(count(svg, "<title>arrive empty[1] at line 32 (128 threads)</title>") == 2);
  CHECK(svg.find("class=\"axis\"") != std::string::npos);
}

TEST_CASE("the XML check rejects what a broken writer would produce") {
  CHECK(xml_problem("<a><b/></a>") == "");
  CHECK(xml_problem("<a x=\"1\">t &amp; u</a>") == "");
  CHECK(xml_problem("<a><b></a>") != "");
  CHECK(xml_problem("<a>") == "<a> is never closed");
  CHECK(xml_problem("<a>x & y</a>").find("bare '&'") == 0);
  CHECK(xml_problem("<a x=1></a>").find("malformed attribute") == 0);
  CHECK(xml_problem("<a>1 < 2</a>") != "");
  CHECK(xml_problem("<a/><b/>").find("a second root element") == 0);
}

TEST_CASE("block, named, cluster and subgroup barriers are timed in their lanes") {
  SUBCASE("named barriers: waits and arrives of both roles") {
    Profiled p = profile_file("tests/kernels/sync/named_barrier_roles.tile", "M=32,N=128");
    auto waits = waits_by_role(p.lanes);
    REQUIRE(waits["loader"].size() == 2);
    REQUIRE(waits["transformer"].size() == 2);
    CHECK(waits["loader"][0]->name.find("named barrier 2 at line") == 0);
    CHECK(waits["transformer"][0]->name.find("named barrier 1 at line") == 0);
    std::vector<RoleSummary> roles = summarize_roles(p.lanes);
    REQUIRE(roles.size() == 3);
    CHECK(roles[1].role == "loader");
    CHECK(roles[1].totals.arrives == 2);
    CHECK(roles[2].role == "transformer");
    CHECK(roles[2].totals.arrives == 2);
  }
  SUBCASE("subgroup barriers and the block barrier, outside roles") {
    Profiled p = profile_file("tests/kernels/sync/subgroup_reduce.tile", "N=128");  // two blocks
    auto waits = waits_by_role(p.lanes);
    REQUIRE(waits.size() == 1);
    REQUIRE(waits["block"].size() == 8);
    CHECK(waits["block"][0]->name.find("subgroup_barrier at line") == 0);
    CHECK(waits["block"][3]->name.find("barrier at line") == 0);
    CHECK(waits["block"][3]->threads == 64);
  }
  SUBCASE("cluster_sync") {
    Profiled p = profile_file("tests/kernels/sync/cluster_exchange.tile", "N=256");  // one cluster of 2
    REQUIRE(p.lanes.size() == 2);
    std::set<int64_t> blocks;
    for (const cpu::SyncLane* lane : p.lanes) {
      blocks.insert(lane->block[0]);
      REQUIRE(lane->events.size() == 1);
      CHECK(lane->events[0].name.find("cluster_sync at line") == 0);
    }
    CHECK(blocks == std::set<int64_t>{0, 1});
  }
}

TEST_CASE("a trace records only its kernel, and one trace records at a time") {
  cli::InputModule input = *cli::read_input_module(std::string(TILERT_SOURCE_DIR) + "/" + kGemmWs);
  const Kernel& kernel = input.module.kernels.at(0);
  Kernel other = kernel;  // a different kernel object: not recorded
  cpu::SyncTrace first, second;
  REQUIRE(first.start(other).ok());
  absl::Status busy = second.start(kernel);
  CHECK(absl::IsFailedPrecondition(busy));
  CHECK(std::string(busy.message()).find("another sync trace is recording") == 0);
  std::vector<check::ScalarValue> scalars =
      *check::resolve_scalar_values(kernel, *check::parse_size_list("M=128,N=128,K=32"));
  // profile_cpu_launch cannot start its own trace while `first` records.
  absl::StatusOr<ProfileResult> result = profile_cpu_launch(kernel, scalars, ProfileOptions{});
  CHECK(absl::IsFailedPrecondition(result.status()));
  first.stop();
  CHECK(first.lanes().empty());
  result = profile_cpu_launch(kernel, scalars, ProfileOptions{.repeat = 2});
  REQUIRE(result.ok());
  CHECK(result->repeat == 2);
  CHECK(result->trace->lanes().size() == 3);  // the last instrumented launch only
}

TEST_CASE("launch errors and oversized inputs are reported, not crashed on") {
  cli::InputModule input = *cli::read_input_module(std::string(TILERT_SOURCE_DIR) + "/" + kGemmWs);
  const Kernel& kernel = input.module.kernels.at(0);
  std::vector<check::ScalarValue> scalars =
      *check::resolve_scalar_values(kernel, *check::parse_size_list("M=65536,N=65536,K=64"));
  absl::StatusOr<ProfileResult> result = profile_cpu_launch(kernel, scalars, ProfileOptions{});
  CHECK(absl::IsResourceExhausted(result.status()));
  CHECK(std::string(result.status().message()).find("choose smaller sizes") != std::string::npos);
  result = profile_cpu_launch(kernel, std::vector<check::ScalarValue>(2), ProfileOptions{});
  CHECK(absl::IsInvalidArgument(result.status()));
}

}  // namespace
}  // namespace tilert::profile
