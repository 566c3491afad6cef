// Binding launch arguments to a kernel's signature: every check a launch makes before anything
// runs, each failure naming the argument ("launch gemm: argument 2 (C): expected f16[512, 512],
// got f32[512, 512]").
#pragma once

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "ir/param_eval.h"
#include "runtime/backend.h"
#include "runtime/objects.h"

namespace tilert::runtime {

struct BoundLaunch {
  std::vector<LaunchValue> values;  // one per parameter, as the backend takes them
  LaunchShape shape;                // evaluated with the scalar arguments
};

// Checks, in order: the argument count; each argument's kind against its parameter's dtype, and
// scalars against the dtype's range; the launch shape (grid, tensor shapes) evaluated from the
// scalars; each tensor's dtype, rank and shape, its buffer (present, on `device`, large enough).
// Every error is InvalidArgument.
// Where a buffer or stream on `actual` is, said to someone who needed `expected`:
// "cuda:0, the kernel was loaded for cpu:0", or "cpu:0 of another context".
std::string wrong_device_text(const tilert_device_s& actual, const tilert_device_s& expected);

absl::StatusOr<BoundLaunch> bind_launch_args(const Kernel& kernel, const tilert_device_s& device,
                                             std::span<const tilert_arg> args);

}  // namespace tilert::runtime
