// Evaluates integer expressions over a kernel's scalar parameters: tensor shapes and grid sizes,
// which the runtime checks launch arguments against and every backend launches with.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace tilert {

// `param_values[i]` is the value of parameter symbol i (entries for tensor parameters are ignored).
// Errors (naming `what`): a reference to anything but a scalar parameter, division by zero.
absl::StatusOr<int64_t> eval_param_expr(const Kernel& kernel, const Expr& e,
                                        std::span<const int64_t> param_values,
                                        std::string_view what);

struct LaunchShape {
  int64_t grid[3] = {1, 1, 1};
  int64_t threads = 1;
  // Shape of each tensor parameter, indexed by parameter position (empty for scalars).
  std::vector<std::vector<int64_t>> tensor_shapes;
};

// Grid, threads and tensor shapes for the given scalar values. Errors name the parameter or the
// grid dimension: a negative extent, a grid dimension < 1 or > 2^31-1.
absl::StatusOr<LaunchShape> eval_launch_shape(const Kernel& kernel,
                                              std::span<const int64_t> param_values);

}  // namespace tilert
