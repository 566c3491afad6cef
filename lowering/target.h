// Target descriptions: what one GPU architecture offers the lowerers (subgroup sizes, memory and
// thread limits, synchronization and arithmetic features, matrix-unit shapes), the predefined
// targets, parsing of target strings such as "ptx:sm_90a", and the choice of a pipelined loop's
// stage count. Facts and their sources are listed in lowering/README.md and lowering/targets.def.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"

namespace tilert::lowering {

// The instruction set a target's code is emitted in.
enum class ApiKind : uint8_t { kPtx, kAmdgcn, kSpirv };
std::string_view api_kind_name(ApiKind api);

// X(enumerator, name) — capabilities a lowerer may rely on. Names are the spelling used in
// diagnostics and in TargetDescription::feature_names().
#define TILERT_TARGET_FEATURES(X)                                                               \
  X(kAsyncCopy, "async_copy")                 /* global->shared copies that bypass registers */ \
  X(kHardwareMbarrier, "hardware_mbarrier")   /* mbarrier objects in shared memory */           \
  X(kTensorMemoryAccelerator, "tma")          /* bulk tensor copies completing on mbarriers */  \
  X(kClusters, "clusters")                    /* thread-block clusters, distributed shared */   \
  X(kSubgroupForwardProgress, "subgroup_forward_progress") /* a spin-wait on another subgroup  \
                                                              of the block terminates */        \
  X(kNamedBarriers, "named_barriers")         /* barriers over a subset of the block */          \
  X(kSubgroupArithmetic, "subgroup_arithmetic") /* subgroup reduce / scan */                     \
  X(kSubgroupClustered, "subgroup_clustered") /* reductions over aligned clusters of lanes */     \
  X(kFloat16Arithmetic, "float16_arithmetic")                                                   \
  X(kBFloat16Arithmetic, "bfloat16_arithmetic")                                                 \
  X(kInt8Arithmetic, "int8_arithmetic")                                                         \
  X(kStorage16Bit, "storage_16bit")           /* 16-bit loads and stores of global memory */     \
  X(kShaderClock, "shader_clock")             /* a readable cycle counter */

enum class TargetFeature : uint8_t {
#define TILERT_X(e, name) e,
  TILERT_TARGET_FEATURES(TILERT_X)
#undef TILERT_X
};
std::string_view target_feature_name(TargetFeature f);

// One shape a matrix unit multiplies: D[m,n] = A[m,k] * B[k,n] + C[m,n]. Instructions with a
// range of N (wgmma m64nNk16: N = 8, 16, ..., 256) give n_max and n_step; fixed shapes have
// n_max == n.
struct MatrixShape {
  std::string_view instruction;  // e.g. "mma.sync.m16n8k16", "v_mfma_f32_32x32x8f16"
  int m = 0;
  int n = 0;
  int k = 0;
  int n_max = 0;
  int n_step = 0;
  DType input = DType::kF16;        // type of A and B
  DType accumulator = DType::kF32;  // type of C and D
  bool supports_n(int candidate) const;
};

// Workgroup-scope matrices (Vulkan: VK_NV_cooperative_matrix2's workgroupScope and
// flexibleDimensions): one matrix of any size whose dimensions are multiples of a granule, held
// by every invocation of the workgroup; the driver stages the operands through shared memory it
// reserves. Reported per device, so only run-time descriptions have them.
struct WorkgroupMatrixGranule {
  int m = 0, n = 0, k = 0;  // M, N and K must be multiples of these
  int invocations = 0;      // for workgroups of exactly this many invocations
  DType input = DType::kF16;  // A and B; C f32
};
struct WorkgroupMatrices {
  std::vector<WorkgroupMatrixGranule> granules;  // empty: the target has none
  int max_invocations = 0;
  int max_dimension = 0;           // of any of M, N, K
  int64_t reserved_shared_bytes = 0;  // taken from shared_memory_per_block while in use
  bool tensor_addressing = false;  // matrix_tensor_load / _store (windows clamped at the edges)
  // The granule for a workgroup of `threads` invocations and `input` operands; nullptr if none.
  const WorkgroupMatrixGranule* granule(int threads, DType input) const;
};

// How deep a pipelined loop may be on a target when its author gave no stage count (auto) and
// the most stages the target's mechanism uses well.
struct PipelinePolicy {
  int auto_stages = 2;
  int max_stages = 2;
};

struct TargetDescription {
  ApiKind api = ApiKind::kPtx;
  std::string arch;                       // "sm_90a", "gfx90a", "vulkan1.2"
  std::vector<int> subgroup_sizes;        // every size the hardware can run, ascending
  int64_t shared_memory_per_block = 0;    // bytes one block may allocate (opt-in maximum)
  int max_threads_per_block = 0;
  int max_registers_per_thread = 0;       // 32-bit registers; 0 when the API hides them
  int64_t registers_per_multiprocessor = 0;  // 32-bit registers per SM / CU; 0 when unknown
  uint32_t feature_bits = 0;
  std::vector<MatrixShape> matrix_shapes;
  // Vulkan reports cooperative-matrix shapes per device (vkGetPhysicalDeviceCooperativeMatrix
  // PropertiesKHR); matrix_shapes is then empty and the runtime fills it in.
  bool matrix_shapes_queried_at_run_time = false;
  // Vulkan's limits and optional features are per device: the description holds the minimum
  // the specification guarantees and the runtime overwrites it from the device's properties.
  bool limits_are_guaranteed_minimums = false;
  WorkgroupMatrices workgroup_matrices;
  PipelinePolicy pipeline;

  int min_subgroup_size() const { return subgroup_sizes.empty() ? 0 : subgroup_sizes.front(); }
  int max_subgroup_size() const { return subgroup_sizes.empty() ? 0 : subgroup_sizes.back(); }
  bool has(TargetFeature f) const { return (feature_bits >> static_cast<int>(f)) & 1u; }
  void set(TargetFeature f, bool on);
  std::vector<std::string_view> feature_names() const;
  // "ptx:sm_90a" — the string parse_target accepts.
  std::string name() const;
};

// The predefined targets, one row each in lowering/targets.def.
enum class PredefinedTarget : uint8_t {
#define TILERT_TARGET(enumerator, ...) enumerator,
#include "lowering/targets.def"
#undef TILERT_TARGET
};

const TargetDescription& predefined_target(PredefinedTarget t);
std::span<const TargetDescription> predefined_targets();

// Parses "<api>:<arch>" (api: ptx, amdgcn, spirv) into a copy of the predefined description.
// Errors name the input and list what would have been accepted.
absl::StatusOr<TargetDescription> parse_target(std::string_view text);

// The number of shared-memory stages of a pipelined loop. `stage_hint` is the loop's
// stages(N) (0: auto). A hint is honoured up to the target's max_stages; auto takes the
// target's auto_stages. Either way the result is at least 1 and never more than
// (shared_memory_per_block - other_shared_bytes) / bytes_per_stage. Fails when not even one
// stage fits, or on negative arguments.
absl::StatusOr<int> choose_pipeline_stages(int64_t bytes_per_stage, int stage_hint,
                                           const TargetDescription& target,
                                           int64_t other_shared_bytes = 0);

}  // namespace tilert::lowering
