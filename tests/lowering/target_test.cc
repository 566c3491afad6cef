#include "lowering/target.h"

#include <doctest/doctest.h>

#include <string>

namespace tilert::lowering {
namespace {

TargetDescription parsed(std::string_view text) {
  absl::StatusOr<TargetDescription> t = parse_target(text);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return *t;
}

std::string parse_error(std::string_view text) {
  absl::StatusOr<TargetDescription> t = parse_target(text);
  REQUIRE(!t.ok());
  CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

TEST_CASE("target: every predefined target parses back from its name") {
  CHECK(predefined_targets().size() == 9);
  for (const TargetDescription& d : predefined_targets()) {
    TargetDescription back = parsed(d.name());
    CHECK(back.arch == d.arch);
    CHECK(back.api == d.api);
    CHECK(d.min_subgroup_size() >= 1);
    CHECK(d.max_subgroup_size() <= 128);
    CHECK(d.pipeline.auto_stages <= d.pipeline.max_stages);
  }
  CHECK(predefined_target(PredefinedTarget::kGfx1100).name() == "amdgcn:gfx1100");
}

TEST_CASE("target: NVIDIA descriptions") {
  TargetDescription sm80 = parsed("ptx:sm_80");
  CHECK(sm80.api == ApiKind::kPtx);
  CHECK(sm80.shared_memory_per_block == 166912);
  CHECK(sm80.max_threads_per_block == 1024);
  CHECK(sm80.min_subgroup_size() == 32);
  CHECK(sm80.max_subgroup_size() == 32);
  CHECK(sm80.has(TargetFeature::kAsyncCopy));
  CHECK(sm80.has(TargetFeature::kHardwareMbarrier));
  CHECK_FALSE(sm80.has(TargetFeature::kTensorMemoryAccelerator));
  CHECK_FALSE(sm80.has(TargetFeature::kClusters));

  TargetDescription sm90a = parsed("ptx:sm_90a");
  CHECK(sm90a.shared_memory_per_block == 232448);
  CHECK(sm90a.has(TargetFeature::kTensorMemoryAccelerator));
  CHECK(sm90a.has(TargetFeature::kClusters));
  bool has_wgmma_n256 = false;
  for (const MatrixShape& s : sm90a.matrix_shapes) {
    if (s.m == 64 && s.k == 16 && s.input == DType::kF16 && s.supports_n(256) &&
        s.supports_n(8) && !s.supports_n(12)) {
      has_wgmma_n256 = true;
    }
  }
  CHECK(has_wgmma_n256);
  bool sm90_has_wgmma = false;
  for (const MatrixShape& s : parsed("ptx:sm_90").matrix_shapes) sm90_has_wgmma |= s.m == 64;
  CHECK_FALSE(sm90_has_wgmma);  // wgmma needs the architecture-specific sm_90a
  CHECK(sm80.matrix_shapes.front().instruction == "mma.sync.aligned.m16n8k16");
}

TEST_CASE("target: AMD and Vulkan descriptions") {
  TargetDescription gfx90a = parsed("amdgcn:gfx90a");
  CHECK(gfx90a.subgroup_sizes == std::vector<int>{64});
  CHECK(gfx90a.shared_memory_per_block == 65536);
  CHECK_FALSE(gfx90a.has(TargetFeature::kNamedBarriers));
  CHECK(gfx90a.matrix_shapes.front().instruction == "v_mfma_f32_32x32x8f16");
  CHECK(gfx90a.matrix_shapes.front().k == 8);

  TargetDescription gfx1100 = parsed("amdgcn:gfx1100");
  CHECK(gfx1100.min_subgroup_size() == 32);
  CHECK(gfx1100.max_subgroup_size() == 64);
  CHECK(gfx1100.matrix_shapes.front().instruction == "v_wmma_f32_16x16x16_f16");

  TargetDescription vk = parsed("spirv:vulkan1.2");
  CHECK(vk.shared_memory_per_block == 16384);
  CHECK(vk.max_threads_per_block == 128);
  CHECK(vk.min_subgroup_size() == 1);
  CHECK(vk.max_subgroup_size() == 128);
  CHECK(vk.matrix_shapes.empty());
  CHECK(vk.matrix_shapes_queried_at_run_time);
  CHECK(vk.limits_are_guaranteed_minimums);
  CHECK(vk.feature_names().empty());
  CHECK_FALSE(vk.has(TargetFeature::kSubgroupForwardProgress));
  vk.set(TargetFeature::kSubgroupArithmetic, true);
  CHECK(vk.feature_names() == std::vector<std::string_view>{"subgroup_arithmetic"});
  vk.set(TargetFeature::kSubgroupArithmetic, false);
  CHECK(vk.feature_bits == 0);
  CHECK(parsed("spirv:vulkan1.3").arch == "vulkan1.3");
}

TEST_CASE("target: parse errors name the input and what is accepted") {
  CHECK(parse_error("sm_90a") ==
        "target 'sm_90a': expected '<api>:<arch>', e.g. 'ptx:sm_90a', 'amdgcn:gfx90a', "
        "'spirv:vulkan1.2'");
  CHECK(parse_error("cuda:sm_80") ==
        "target 'cuda:sm_80': unknown API 'cuda'; expected one of ptx, amdgcn, spirv");
  CHECK(parse_error("ptx:sm_70") ==
        "target 'ptx:sm_70': unknown ptx architecture 'sm_70'; known: sm_80, sm_90, sm_90a");
  CHECK(parse_error("amdgcn:sm_90a") ==
        "target 'amdgcn:sm_90a': unknown amdgcn architecture 'sm_90a'; known: gfx90a, gfx940, "
        "gfx942, gfx1100");
  CHECK(parse_error("spirv:") ==
        "target 'spirv:': unknown spirv architecture ''; known: vulkan1.2, vulkan1.3");
  CHECK(parse_error("") != "");
  CHECK(parse_error("PTX:sm_80").find("unknown API 'PTX'") != std::string::npos);
}

struct StageCase {
  PredefinedTarget target;
  int64_t bytes_per_stage;
  int hint;
  int64_t other_bytes;
  int expected;
};

TEST_CASE("target: pipeline stage choice table") {
  constexpr int64_t kKiB = 1024;
  const StageCase cases[] = {
      // sm_90: deep when memory allows, bounded by memory.
      {PredefinedTarget::kSm90a, 16 * kKiB, 0, 0, 8},
      {PredefinedTarget::kSm90a, 32 * kKiB, 0, 0, 7},    // 227 KiB / 32 KiB
      {PredefinedTarget::kSm90a, 64 * kKiB, 0, 0, 3},
      {PredefinedTarget::kSm90a, 16 * kKiB, 3, 0, 3},    // an explicit hint is honoured
      {PredefinedTarget::kSm90a, 16 * kKiB, 12, 0, 8},   // ...up to the target's maximum
      {PredefinedTarget::kSm90, 200 * kKiB, 0, 0, 1},
      // sm_80: 2-3 stages of cp.async.
      {PredefinedTarget::kSm80, 16 * kKiB, 0, 0, 3},
      {PredefinedTarget::kSm80, 16 * kKiB, 8, 0, 3},
      {PredefinedTarget::kSm80, 16 * kKiB, 2, 0, 2},
      {PredefinedTarget::kSm80, 70 * kKiB, 0, 0, 2},
      {PredefinedTarget::kSm80, 100 * kKiB, 0, 0, 1},
      {PredefinedTarget::kSm80, 16 * kKiB, 0, 130 * kKiB, 2},  // other shared tiles count too
      {PredefinedTarget::kSm80, 16 * kKiB, 1, 0, 1},
      // Vulkan: double-buffered workgroup-barrier stages in the guaranteed 16 KiB.
      {PredefinedTarget::kVulkan12, 4 * kKiB, 0, 0, 2},
      {PredefinedTarget::kVulkan12, 4 * kKiB, 4, 0, 4},
      {PredefinedTarget::kVulkan12, 4 * kKiB, 8, 0, 4},
      {PredefinedTarget::kVulkan13, 6 * kKiB, 4, 0, 2},
      {PredefinedTarget::kVulkan12, 12 * kKiB, 0, 0, 1},
      {PredefinedTarget::kVulkan12, 0, 3, 0, 3},   // nothing in shared memory: only the hint counts
      // AMD: LDS double buffering.
      {PredefinedTarget::kGfx90a, 16 * kKiB, 0, 0, 2},
      {PredefinedTarget::kGfx90a, 16 * kKiB, 4, 0, 4},
      {PredefinedTarget::kGfx1100, 40 * kKiB, 3, 0, 1},
  };
  for (const StageCase& c : cases) {
    const TargetDescription& t = predefined_target(c.target);
    absl::StatusOr<int> stages = choose_pipeline_stages(c.bytes_per_stage, c.hint, t, c.other_bytes);
    INFO(t.name(), " bytes/stage ", c.bytes_per_stage, " hint ", c.hint);
    REQUIRE(stages.ok());
    CHECK(*stages == c.expected);
  }
}

TEST_CASE("target: pipeline stage choice errors") {
  const TargetDescription& vk = predefined_target(PredefinedTarget::kVulkan12);
  absl::StatusOr<int> too_big = choose_pipeline_stages(20000, 0, vk);
  REQUIRE(!too_big.ok());
  CHECK(too_big.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(too_big.status().message()) ==
        "pipelined loop on spirv:vulkan1.2: one stage needs 20000 bytes of shared memory and the "
        "rest of the kernel 0, but a block may use at most 16384");
  CHECK(!choose_pipeline_stages(1024, 0, vk, 16000).ok());
  absl::StatusOr<int> negative = choose_pipeline_stages(1024, -1, vk);
  REQUIRE(!negative.ok());
  CHECK(std::string(negative.status().message()).find("negative argument") != std::string::npos);
}

}  // namespace
}  // namespace tilert::lowering
