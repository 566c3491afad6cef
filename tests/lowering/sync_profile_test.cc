// Sync profiling in the lowering (lowering/sync_profile.h): what the instrumented lowering adds,
// that the plain lowering is untouched, and the decoding of a record. The device side runs in
// `tilert profile --device cuda` (recorded in tests/bench/RESULTS.md).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/text/parser.h"
#include "lowering/lower_kernel.h"
#include "lowering/sync_profile.h"

namespace tilert::lowering {
namespace {

Module parse_file(const std::string& relative) {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Module> m = parse_tile(text.str(), relative);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  return *m;
}

void collect(const simt::Body& body, simt::StmtKind kind, std::vector<const simt::Stmt*>* out) {
  for (const simt::Stmt& s : body) {
    if (s.kind == kind) out->push_back(&s);
    collect(s.body, kind, out);
    collect(s.else_body, kind, out);
  }
}

int count_stores_to(const simt::Function& f, int32_t param) {
  std::vector<const simt::Stmt*> stores;
  collect(f.body, simt::StmtKind::kStore, &stores);
  int n = 0;
  for (const simt::Stmt* s : stores) n += s->space == simt::Space::kGlobal && static_cast<int32_t>(s->id) == param;
  return n;
}

TEST_CASE("sync profile: the warp-specialized GEMM gets one lane per warp and per role") {
  Module m = parse_file("examples/gemm_ws.tile");
  const TargetDescription target = predefined_target(PredefinedTarget::kSm90a);
  absl::StatusOr<simt::Function> plain = lower_kernel(m.kernels.at(0), target);
  absl::StatusOr<simt::Function> profiled = lower_kernel(m.kernels.at(0), target, {.sync_profile = true});
  REQUIRE(plain.ok());
  REQUIRE(profiled.ok());

  CHECK(plain->profile_param == -1);
  CHECK(plain->profile_lanes.empty());
  CHECK(count_stores_to(*plain, static_cast<int32_t>(plain->params.size())) == 0);
  // The plain lowering is the one without options, statement for statement.
  absl::StatusOr<simt::Function> again = lower_kernel(m.kernels.at(0), target, {.sync_profile = false});
  REQUIRE(again.ok());
  CHECK(again->body == plain->body);

  REQUIRE(profiled->profile_param == static_cast<int32_t>(profiled->params.size()) - 1);
  CHECK(profiled->params.back().type == DType::kU32);
  CHECK(profiled->params.back().is_array);
  // 256 threads: 8 warps of 32, then the producer (threads 0..127) and the consumer (128..255).
  REQUIRE(profiled->profile_lanes.size() == 10);
  for (int w = 0; w < 8; ++w) {
    CHECK(profiled->profile_lanes[w].name == "subgroup-" + std::to_string(w));
    CHECK(profiled->profile_lanes[w].first_thread == 32 * w);
    CHECK_FALSE(profiled->profile_lanes[w].is_role);
  }
  CHECK(profiled->profile_lanes[8] == simt::ProfileLane{"producer", true, 0, 128});
  CHECK(profiled->profile_lanes[9] == simt::ProfileLane{"consumer", true, 128, 128});
  // Both roles wait (producer on empty, consumer on full): their sites are named.
  bool producer_site = false, consumer_site = false;
  for (const simt::SyncSite& s : profiled->sync_sites) {
    producer_site = producer_site || (s.role == "producer" && s.barrier == "mbarrier empty");
    consumer_site = consumer_site || (s.role == "consumer" && s.barrier == "mbarrier full");
  }
  CHECK(producer_site);
  CHECK(consumer_site);
  CHECK(count_stores_to(*profiled, profiled->profile_param) > 10);
  // Every barrier of the plain lowering is still there, once each.
  std::vector<const simt::Stmt*> plain_barriers, profiled_barriers;
  collect(plain->body, simt::StmtKind::kBarrier, &plain_barriers);
  collect(profiled->body, simt::StmtKind::kBarrier, &profiled_barriers);
  CHECK(plain_barriers.size() == profiled_barriers.size());
  CHECK(profile_words(*profiled) == kProfiledBlocks * (kBlockHeaderWords + (8 + kMaxProfiledRoles) * kLaneWords));
}

TEST_CASE("sync profile: a kernel without roles has subgroup lanes only") {
  Module m = parse_file("examples/softmax.tile");
  absl::StatusOr<simt::Function> f =
      lower_kernel(m.kernels.at(0), predefined_target(PredefinedTarget::kSm80), {.sync_profile = true});
  REQUIRE(f.ok());
  REQUIRE_FALSE(f->profile_lanes.empty());
  for (const simt::ProfileLane& l : f->profile_lanes) CHECK_FALSE(l.is_role);
  CHECK(static_cast<int64_t>(f->profile_lanes.size()) == (f->threads + 31) / 32);
}

// A function shaped like a lowered one: two subgroup lanes, one role, two sites.
simt::Function fake_function() {
  simt::Function f;
  f.name = "k";
  f.threads = 64;
  f.profile_param = 0;
  f.profile_lanes = {{"subgroup-0", false, 0, 32}, {"subgroup-1", false, 32, 32}, {"producer", true, 0, 64}};
  f.sync_sites = {{"workgroup barrier", "block", 0}, {"mbarrier full", "producer", 12}};
  return f;
}

uint32_t* lane_at(std::vector<uint32_t>& words, const simt::Function& f, int64_t block, int64_t lane) {
  return words.data() + block * profile_region_words(f) + kBlockHeaderWords + lane * kLaneWords;
}

void put64(uint32_t* w, uint64_t v) {
  w[0] = static_cast<uint32_t>(v);
  w[1] = static_cast<uint32_t>(v >> 32);
}

TEST_CASE("sync profile: decoding turns cycles into time with the launch's clock rate") {
  simt::Function f = fake_function();
  std::vector<uint32_t> words(profile_words(f), 0);
  // Block 0: 1000 ns of time and 2000 cycles (2 cycles per ns). c0 sits just below a 2^32
  // boundary, so later low words wrap.
  const uint64_t c0 = (uint64_t{5} << 32) - 100;
  put64(&words[0], 1'000'000);
  put64(&words[2], c0);
  put64(&words[4], 1'001'000);
  put64(&words[6], c0 + 2000);
  uint32_t* w0 = lane_at(words, f, 0, 0);
  w0[0] = 1;                                   // one record
  w0[1] = static_cast<uint32_t>(c0);           // lane start
  w0[2] = static_cast<uint32_t>(c0 + 1800);    // lane end (wrapped)
  w0[kLaneHeaderWords + 0] = 0;                // site: workgroup barrier
  w0[kLaneHeaderWords + 1] = static_cast<uint32_t>(c0 + 200);  // wrapped: low word 100
  w0[kLaneHeaderWords + 2] = static_cast<uint32_t>(c0 + 600);
  // Subgroup 1 started 50 cycles before thread 0 read c0.
  uint32_t* w1 = lane_at(words, f, 0, 1);
  w1[1] = static_cast<uint32_t>(c0 - 50);
  w1[2] = static_cast<uint32_t>(c0 + 1900);
  uint32_t* role = lane_at(words, f, 0, 2);
  role[0] = kLaneRecords + 3;  // more waits than room: 3 dropped
  role[1] = static_cast<uint32_t>(c0);
  role[2] = static_cast<uint32_t>(c0 + 2000);
  for (int64_t r = 0; r < kLaneRecords; ++r) {
    uint32_t* rec = role + kLaneHeaderWords + r * kRecordWords;
    rec[0] = 1;
    rec[1] = rec[2] = static_cast<uint32_t>(c0 + 2 * r);
  }
  // Block 1 never recorded (a launch of one block): absent.
  absl::StatusOr<std::vector<ProfiledLane>> lanes = decode_sync_profile(f, words, 1);
  REQUIRE_MESSAGE(lanes.ok(), lanes.status().ToString());
  REQUIRE(lanes->size() == 3);
  const ProfiledLane& sg = (*lanes)[0];
  CHECK(sg.lane == 0);
  CHECK(sg.start_ns == 1'000'000);
  CHECK(sg.end_ns == 1'000'900);
  REQUIRE(sg.waits.size() == 1);
  CHECK(sg.waits[0].site == 0);
  CHECK(sg.waits[0].start_ns == 1'000'100);
  CHECK(sg.waits[0].end_ns == 1'000'300);
  const ProfiledLane& early = (*lanes)[1];
  CHECK(early.lane == 1);
  CHECK(early.start_ns == 999'975);
  CHECK(early.end_ns == 1'000'950);
  CHECK(early.waits.empty());
  const ProfiledLane& r = (*lanes)[2];
  CHECK(r.lane == 2);
  CHECK(r.waits.size() == static_cast<size_t>(kLaneRecords));
  CHECK(r.dropped == 3);
  CHECK(r.end_ns == 1'001'000);
}

TEST_CASE("sync profile: bad records are errors") {
  simt::Function f = fake_function();
  std::vector<uint32_t> words(profile_words(f), 0);
  absl::StatusOr<std::vector<ProfiledLane>> short_record =
      decode_sync_profile(f, std::span(words).first(words.size() - 1), 1);
  CHECK(absl::IsInvalidArgument(short_record.status()));
  // Nothing finished: no clock rate.
  CHECK(absl::IsFailedPrecondition(decode_sync_profile(f, words, 1).status()));
  put64(&words[0], 10);
  put64(&words[2], 10);
  put64(&words[4], 20);
  put64(&words[6], 30);
  uint32_t* w0 = lane_at(words, f, 0, 0);
  w0[0] = 1;
  w0[kLaneHeaderWords] = 7;  // no such site
  CHECK(absl::IsDataLoss(decode_sync_profile(f, words, 1).status()));
  simt::Function plain = fake_function();
  plain.profile_param = -1;
  CHECK(absl::IsInvalidArgument(decode_sync_profile(plain, words, 1).status()));
}

}  // namespace
}  // namespace tilert::lowering
