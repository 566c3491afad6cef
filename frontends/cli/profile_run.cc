#include "frontends/cli/profile_run.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_backend.h"
#include "ir/param_eval.h"
#include "ir/status.h"

namespace tilert::profile {
namespace {

// Floats uniform in [-1, 1], small integers: the value ranges `tilert run` uses, so a profile
// sees the control flow a run does.
double random_element(std::mt19937_64& rng, DType dtype) {
  switch (dtype_kind(dtype)) {
    case DTypeKind::kFloat: return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    case DTypeKind::kSigned: return std::uniform_int_distribution<int>(-4, 4)(rng);
    case DTypeKind::kUnsigned: return std::uniform_int_distribution<int>(0, 8)(rng);
    case DTypeKind::kBool: return std::uniform_int_distribution<int>(0, 1)(rng);
  }
  return 0.0;
}

}  // namespace

absl::StatusOr<HostTensors> make_profile_inputs(const Kernel& kernel, std::span<const check::ScalarValue> scalars,
                                                uint64_t seed) {
  std::vector<int64_t> param_values = check::integer_param_values(scalars);
  ASSIGN_OR_RETURN(LaunchShape shape, eval_launch_shape(kernel, param_values));
  HostTensors host;
  host.bytes.resize(kernel.num_params);
  host.args.resize(kernel.num_params);
  int64_t total = 0;
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    const Symbol& param = kernel.symbols[p];
    if (param.kind != SymbolKind::kTensorParam) {
      const check::ScalarValue& v = scalars[p];
      host.args[p] = v.is_float ? cpu::ArgValue(v.float_value) : cpu::ArgValue(v.int_value);
      continue;
    }
    int64_t elements = 1;
    for (int64_t extent : shape.tensor_shapes[p]) {
      if (extent > 0 && elements > kMaxProfiledElements / extent) elements = kMaxProfiledElements;
      elements *= std::max<int64_t>(extent, 0);
    }
    total += elements;
    if (total > kMaxProfiledElements)
      return absl::ResourceExhaustedError(absl::StrCat("tensor ", param.name, " brings the inputs over ",
                                                       kMaxProfiledElements, " elements; choose smaller sizes"));
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + p);
    std::vector<uint8_t>& bytes = host.bytes[p];
    bytes.resize(static_cast<size_t>(elements) * dtype_size(param.dtype));
    for (int64_t i = 0; i < elements; ++i)
      store_element(bytes.data() + i * dtype_size(param.dtype), param.dtype, random_element(rng, param.dtype));
    host.args[p] = cpu::TensorArg{.data = bytes.data(), .size_bytes = bytes.size(), .storage = param.dtype};
  }
  return host;
}

namespace {

absl::StatusOr<double> timed_launch(const Kernel& kernel, const HostTensors& host, const ProfileOptions& options) {
  cpu::RunOptions run;
  run.num_threads = options.num_threads;
  auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(cpu::run_kernel(kernel, host.args, run));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<const cpu::SyncLane*> ProfileResult::lanes() const {
  if (trace != nullptr) return trace->lanes();
  std::vector<const cpu::SyncLane*> out;
  for (const cpu::SyncLane& lane : device_lanes) out.push_back(&lane);
  return out;
}

double ProfileResult::overhead() const {
  if (uninstrumented_seconds <= 0.0) return 0.0;
  return instrumented_seconds / uninstrumented_seconds - 1.0;
}

absl::StatusOr<ProfileResult> profile_cpu_launch(const Kernel& kernel, std::span<const check::ScalarValue> scalars,
                                                 const ProfileOptions& options) {
  if (scalars.size() != kernel.num_params)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", kernel.name, ": expects ", kernel.num_params,
                                                   " parameter values, got ", scalars.size()));
  ASSIGN_OR_RETURN(HostTensors host, make_profile_inputs(kernel, scalars, options.seed));
  ProfileResult result;
  result.repeat = std::max(1, options.repeat);
  result.instrumented_seconds = std::numeric_limits<double>::infinity();
  result.uninstrumented_seconds = std::numeric_limits<double>::infinity();
  // An untimed launch first, so that neither kind pays for cold caches and first-touch page
  // faults; then alternating the two kinds spreads machine noise over both.
  RETURN_IF_ERROR(timed_launch(kernel, host, options).status());
  for (int i = 0; i < result.repeat; ++i) {
    ASSIGN_OR_RETURN(double plain, timed_launch(kernel, host, options));
    result.uninstrumented_seconds = std::min(result.uninstrumented_seconds, plain);
    auto trace = std::make_unique<cpu::SyncTrace>();
    RETURN_IF_ERROR(trace->start(kernel));
    absl::StatusOr<double> traced = timed_launch(kernel, host, options);
    trace->stop();
    RETURN_IF_ERROR(traced.status());
    result.instrumented_seconds = std::min(result.instrumented_seconds, *traced);
    result.trace = std::move(trace);
  }
  return result;
}

}  // namespace tilert::profile
