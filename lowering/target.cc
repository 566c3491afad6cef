// The predefined target table, target-string parsing and pipeline stage choice.
#include "lowering/target.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"

namespace tilert::lowering {
namespace {

using enum DType;

// Matrix-unit shapes per architecture family (PTX ISA "Warp-level matrix multiply-accumulate"
// and "Asynchronous warpgroup level matrix multiply-accumulate"; AMD CDNA2/CDNA3/RDNA3 ISA).
const std::vector<MatrixShape> kMmaSyncShapes = {
    {"mma.sync.aligned.m16n8k16", 16, 8, 16, 8, 0, kF16, kF32},
    {"mma.sync.aligned.m16n8k16", 16, 8, 16, 8, 0, kBF16, kF32},
    {"mma.sync.aligned.m16n8k32", 16, 8, 32, 8, 0, kI8, kI32},
};
const std::vector<MatrixShape> kSm90aShapes = [] {
  std::vector<MatrixShape> shapes = kMmaSyncShapes;
  // wgmma: one warpgroup (128 threads), M = 64, N a multiple of 8 up to 256.
  shapes.push_back({"wgmma.mma_async.sync.aligned.m64nNk16", 64, 8, 16, 256, 8, kF16, kF32});
  shapes.push_back({"wgmma.mma_async.sync.aligned.m64nNk16", 64, 8, 16, 256, 8, kBF16, kF32});
  return shapes;
}();
const std::vector<MatrixShape> kCdna2MfmaShapes = {
    {"v_mfma_f32_32x32x8f16", 32, 32, 8, 32, 0, kF16, kF32},
    {"v_mfma_f32_16x16x16f16", 16, 16, 16, 16, 0, kF16, kF32},
    {"v_mfma_f32_32x32x8bf16_1k", 32, 32, 8, 32, 0, kBF16, kF32},
    {"v_mfma_f32_16x16x16bf16_1k", 16, 16, 16, 16, 0, kBF16, kF32},
    {"v_mfma_i32_32x32x8i8", 32, 32, 8, 32, 0, kI8, kI32},
    {"v_mfma_i32_16x16x16i8", 16, 16, 16, 16, 0, kI8, kI32},
};
const std::vector<MatrixShape> kCdna3MfmaShapes = {
    {"v_mfma_f32_32x32x8_f16", 32, 32, 8, 32, 0, kF16, kF32},
    {"v_mfma_f32_16x16x16_f16", 16, 16, 16, 16, 0, kF16, kF32},
    {"v_mfma_f32_32x32x8_bf16", 32, 32, 8, 32, 0, kBF16, kF32},
    {"v_mfma_f32_16x16x16_bf16", 16, 16, 16, 16, 0, kBF16, kF32},
    {"v_mfma_i32_32x32x16_i8", 32, 32, 16, 32, 0, kI8, kI32},
    {"v_mfma_i32_16x16x32_i8", 16, 16, 32, 16, 0, kI8, kI32},
};
const std::vector<MatrixShape> kRdna3WmmaShapes = {
    {"v_wmma_f32_16x16x16_f16", 16, 16, 16, 16, 0, kF16, kF32},
    {"v_wmma_f32_16x16x16_bf16", 16, 16, 16, 16, 0, kBF16, kF32},
    {"v_wmma_i32_16x16x16_iu8", 16, 16, 16, 16, 0, kI8, kI32},
};
const std::vector<MatrixShape> kRunTimeQueriedShapes = {};

uint32_t feature_mask(std::initializer_list<TargetFeature> features) {
  uint32_t bits = 0;
  for (TargetFeature f : features) bits |= 1u << static_cast<int>(f);
  return bits;
}

const std::vector<TargetDescription>& target_table() {
  static const std::vector<TargetDescription> table = [] {
    using enum ApiKind;
    using enum TargetFeature;
    std::vector<TargetDescription> rows;
#define SUBGROUPS(...) std::vector<int>{__VA_ARGS__}
#define FEATURES(...) feature_mask({__VA_ARGS__})
#define TILERT_TARGET(row_enumerator, row_api, row_arch, row_subgroups, row_shared,         \
                      row_threads, row_regs, row_regs_per_sm, row_features, row_shapes,      \
                      row_auto_stages, row_max_stages)                                       \
  {                                                                                          \
    TargetDescription d;                                                                     \
    d.api = row_api;                                                                         \
    d.arch = row_arch;                                                                       \
    d.subgroup_sizes = row_subgroups;                                                        \
    d.shared_memory_per_block = row_shared;                                                  \
    d.max_threads_per_block = row_threads;                                                   \
    d.max_registers_per_thread = row_regs;                                                   \
    d.registers_per_multiprocessor = row_regs_per_sm;                                        \
    d.feature_bits = row_features;                                                           \
    d.matrix_shapes = row_shapes;                                                            \
    d.matrix_shapes_queried_at_run_time = (row_api == kSpirv);                               \
    d.limits_are_guaranteed_minimums = (row_api == kSpirv);                                  \
    d.pipeline = {row_auto_stages, row_max_stages};                                          \
    rows.push_back(std::move(d));                                                            \
  }
#include "lowering/targets.def"
#undef TILERT_TARGET
#undef FEATURES
#undef SUBGROUPS
    return rows;
  }();
  return table;
}

constexpr std::array<std::string_view, 3> kApiNames = {"ptx", "amdgcn", "spirv"};

}  // namespace

const WorkgroupMatrixGranule* WorkgroupMatrices::granule(int threads, DType input) const {
  if (threads > max_invocations) return nullptr;
  for (const WorkgroupMatrixGranule& g : granules)
    if (g.invocations == threads && g.input == input) return &g;
  return nullptr;
}

std::string_view api_kind_name(ApiKind api) { return kApiNames[static_cast<int>(api)]; }

std::string_view target_feature_name(TargetFeature f) {
  switch (f) {
#define TILERT_X(e, name) \
  case TargetFeature::e:  \
    return name;
    TILERT_TARGET_FEATURES(TILERT_X)
#undef TILERT_X
  }
  return "?";
}

bool MatrixShape::supports_n(int candidate) const {
  if (n_step == 0) return candidate == n;
  return candidate >= n && candidate <= n_max && (candidate - n) % n_step == 0;
}

void TargetDescription::set(TargetFeature f, bool on) {
  uint32_t bit = 1u << static_cast<int>(f);
  feature_bits = on ? (feature_bits | bit) : (feature_bits & ~bit);
}

std::vector<std::string_view> TargetDescription::feature_names() const {
  std::vector<std::string_view> names;
#define TILERT_X(e, name) \
  if (has(TargetFeature::e)) names.push_back(name);
  TILERT_TARGET_FEATURES(TILERT_X)
#undef TILERT_X
  return names;
}

std::string TargetDescription::name() const {
  return absl::StrCat(av(api_kind_name(api)), ":", arch);
}

const TargetDescription& predefined_target(PredefinedTarget t) {
  return target_table()[static_cast<size_t>(t)];
}

std::span<const TargetDescription> predefined_targets() { return target_table(); }

absl::StatusOr<TargetDescription> parse_target(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target '", av(text), "': expected '<api>:<arch>', e.g. 'ptx:sm_90a', 'amdgcn:gfx90a', "
        "'spirv:vulkan1.2'"));
  }
  std::string_view api_text = text.substr(0, colon);
  std::string_view arch_text = text.substr(colon + 1);
  auto api_it = std::find(kApiNames.begin(), kApiNames.end(), api_text);
  if (api_it == kApiNames.end()) {
    return absl::InvalidArgumentError(absl::StrCat("target '", av(text), "': unknown API '",
                                                   av(api_text),
                                                   "'; expected one of ptx, amdgcn, spirv"));
  }
  auto api = static_cast<ApiKind>(api_it - kApiNames.begin());
  std::vector<std::string> known;
  for (const TargetDescription& d : target_table()) {
    if (d.api != api) continue;
    if (d.arch == arch_text) return d;
    known.push_back(d.arch);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("target '", av(text), "': unknown ", av(api_text), " architecture '",
                   av(arch_text), "'; known: ", absl::StrJoin(known, ", ")));
}

absl::StatusOr<int> choose_pipeline_stages(int64_t bytes_per_stage, int stage_hint,
                                           const TargetDescription& target,
                                           int64_t other_shared_bytes) {
  if (bytes_per_stage < 0 || other_shared_bytes < 0 || stage_hint < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline stage choice: negative argument (bytes per stage ", bytes_per_stage,
        ", other shared bytes ", other_shared_bytes, ", stage hint ", stage_hint, ")"));
  }
  int64_t available = target.shared_memory_per_block - other_shared_bytes;
  if (available < bytes_per_stage || available < 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "pipelined loop on ", target.name(), ": one stage needs ", bytes_per_stage,
        " bytes of shared memory and the rest of the kernel ", other_shared_bytes,
        ", but a block may use at most ", target.shared_memory_per_block));
  }
  int wanted = stage_hint == 0 ? target.pipeline.auto_stages
                               : std::min(stage_hint, target.pipeline.max_stages);
  if (bytes_per_stage > 0) {
    int64_t fitting = available / bytes_per_stage;
    wanted = static_cast<int>(std::min<int64_t>(wanted, fitting));
  }
  return std::max(wanted, 1);
}

}  // namespace tilert::lowering
