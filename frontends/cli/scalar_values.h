// Values for a kernel's scalar parameters: defaults, overridden by "K=V,..." lists (the CLI's
// --size and the conformance harness's `# conformance: M=100, N=77` lines).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace tilert::check {

// One scalar argument. Integer and bool parameters use int_value, float parameters float_value.
struct ScalarValue {
  bool is_float = false;
  int64_t int_value = 0;
  double float_value = 0.0;
};

// One `NAME=VALUE` of a size list, the value still text (its type depends on the parameter).
struct SizeSetting {
  std::string name;
  std::string value;
};

// Parses "M=100, N=77" (commas and/or spaces separate settings). Errors name the bad setting.
absl::StatusOr<std::vector<SizeSetting>> parse_size_list(std::string_view text);

// One value per kernel parameter, by position (tensor positions hold a zero). Each scalar takes its
// setting from `settings`, else its default. Errors: a setting naming no scalar parameter of the
// kernel, a value that does not parse as the parameter's type, a scalar with neither.
absl::StatusOr<std::vector<ScalarValue>> resolve_scalar_values(
    const Kernel& kernel, std::span<const SizeSetting> settings);

// The integer views of `values` that eval_launch_shape takes (floats as 0).
std::vector<int64_t> integer_param_values(std::span<const ScalarValue> values);

// "M=100 N=77 alpha=0.5": every scalar parameter with its value.
std::string format_scalar_values(const Kernel& kernel, std::span<const ScalarValue> values);

// Reduction depth used to pick tolerances: the largest integer scalar parameter, clamped to
// [1, kMaxToleranceDepth]. Shapes and loop bounds are expressions over these parameters, so the
// largest one bounds the length of every reduction and gemm K loop in kernels whose tiles are
// driven by their size parameters; the clamp keeps a huge batch count from hiding real errors.
inline constexpr int64_t kMaxToleranceDepth = 1 << 16;
int64_t tolerance_depth(const Kernel& kernel, std::span<const ScalarValue> values);

}  // namespace tilert::check
