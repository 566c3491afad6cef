#include "runtime/launch_binding.h"

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"

namespace tilert::runtime {

namespace {

// "launch gemm: argument 2 (C): " + what.
absl::Status argument_error(const Kernel& kernel, size_t i, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("launch ", kernel.name, ": argument ", i, " (",
                                                 kernel.symbols[i].name, "): ", av(what)));
}

std::string tensor_type_text(DType dtype, std::span<const int64_t> shape) {
  return absl::StrCat(av(dtype_name(dtype)), "[", absl::StrJoin(shape, ", "), "]");
}

const char* arg_kind_text(tilert_arg_kind kind) {
  switch (kind) {
    case TILERT_ARG_TENSOR: return "a tensor";
    case TILERT_ARG_INT: return "an int";
    case TILERT_ARG_FLOAT: return "a float";
  }
  return "an argument of unknown kind";
}

// The argument kind a parameter takes: tensors for tensors, ints for integer and bool scalars.
tilert_arg_kind expected_kind(const Symbol& param) {
  if (param.kind == SymbolKind::kTensorParam) return TILERT_ARG_TENSOR;
  return is_float(param.dtype) ? TILERT_ARG_FLOAT : TILERT_ARG_INT;
}

void check_int_range(int64_t value, DType dtype, std::string* problem) {
  int64_t low = INT64_MIN, high = INT64_MAX;
  switch (dtype) {
    case DType::kBool: low = 0; high = 1; break;
    case DType::kI8: low = INT8_MIN; high = INT8_MAX; break;
    case DType::kU8: low = 0; high = UINT8_MAX; break;
    case DType::kI32: low = INT32_MIN; high = INT32_MAX; break;
    case DType::kU32: low = 0; high = UINT32_MAX; break;
    default: break;
  }
  if (value < low || value > high) {
    *problem = absl::StrCat(value, " is out of range for ", av(dtype_name(dtype)), " (", low,
                            " .. ", high, ")");
  }
}

// Finite values beyond the largest finite value of a narrow float type would become infinities.
void check_float_range(double value, DType dtype, std::string* problem) {
  double largest = 0;
  switch (dtype) {
    case DType::kF16: largest = 65504.0; break;
    case DType::kBF16: largest = 3.3895313892515355e38; break;
    case DType::kF32: largest = 3.4028234663852886e38; break;
    default: return;
  }
  if (std::isfinite(value) && std::fabs(value) > largest) {
    *problem = absl::StrCat(value, " is out of range for ", av(dtype_name(dtype)));
  }
}

// Kinds and scalar values; fills the scalar entries of `param_values` and `values`.
absl::Status bind_kinds_and_scalars(const Kernel& kernel, std::span<const tilert_arg> args,
                                    std::vector<int64_t>* param_values,
                                    std::vector<LaunchValue>* values) {
  for (size_t i = 0; i < args.size(); ++i) {
    const Symbol& param = kernel.symbols[i];
    const tilert_arg& arg = args[i];
    tilert_arg_kind want = expected_kind(param);
    if (arg.kind != want) {
      std::string wanted = "a tensor";
      if (want != TILERT_ARG_TENSOR) {
        wanted = absl::StrCat(arg_kind_text(want), " (", av(dtype_name(param.dtype)), ")");
      }
      return argument_error(kernel, i,
                            absl::StrCat("expected ", wanted, ", got ", arg_kind_text(arg.kind)));
    }
    std::string problem;
    if (want == TILERT_ARG_INT) {
      check_int_range(arg.int_value, param.dtype, &problem);
      (*param_values)[i] = arg.int_value;
      (*values)[i] = arg.int_value;
    } else if (want == TILERT_ARG_FLOAT) {
      check_float_range(arg.float_value, param.dtype, &problem);
      (*values)[i] = arg.float_value;
    }
    if (!problem.empty()) return argument_error(kernel, i, problem);
  }
  return absl::OkStatus();
}

// Bytes of a tensor of `shape` and `dtype`; false when that does not fit in size_t.
bool tensor_bytes(std::span<const int64_t> shape, DType dtype, size_t* bytes) {
  size_t total = static_cast<size_t>(dtype_size(dtype));
  for (int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(total, static_cast<size_t>(extent), &total)) {
      return false;
    }
  }
  *bytes = total;
  return true;
}

absl::Status bind_tensor(const Kernel& kernel, size_t i, const tilert_arg& arg,
                         std::span<const int64_t> expected_shape, const tilert_device_s& device,
                         LaunchValue* value) {
  const Symbol& param = kernel.symbols[i];
  // Read the code as an integer: a C caller may pass any value, and loading an out-of-range value
  // through the enum type is undefined behaviour in C++.
  std::underlying_type_t<tilert_dtype> raw;
  std::memcpy(&raw, &arg.dtype, sizeof raw);
  int64_t code = static_cast<int64_t>(raw);  // the underlying type may be unsigned
  if (code < 0 || code >= kNumDTypes) {
    return argument_error(kernel, i, absl::StrCat("unknown dtype code ", code));
  }
  if (arg.rank < 0 || arg.rank > TILERT_MAX_RANK) {
    return argument_error(kernel, i, absl::StrCat("rank ", arg.rank, " is out of range (0 .. ",
                                                  TILERT_MAX_RANK, ")"));
  }
  DType dtype = static_cast<DType>(code);
  std::span<const int64_t> shape(arg.shape, static_cast<size_t>(arg.rank));
  if (dtype != param.dtype || !std::equal(shape.begin(), shape.end(), expected_shape.begin(),
                                          expected_shape.end())) {
    return argument_error(kernel, i, absl::StrCat("expected ",
                                                  tensor_type_text(param.dtype, expected_shape),
                                                  ", got ", tensor_type_text(dtype, shape)));
  }
  if (arg.buffer == nullptr) return argument_error(kernel, i, "buffer is NULL");
  if (arg.buffer->device != &device) {
    return argument_error(kernel, i,
                          absl::StrCat("buffer is on ", wrong_device_text(*arg.buffer->device,
                                                                          device)));
  }
  size_t bytes = 0;
  if (!tensor_bytes(shape, dtype, &bytes)) {
    return argument_error(kernel, i, absl::StrCat(tensor_type_text(dtype, shape),
                                                  " does not fit in memory"));
  }
  if (arg.buffer->size < bytes) {
    return argument_error(kernel, i, absl::StrCat("buffer of ", arg.buffer->size,
                                                  " bytes is smaller than ",
                                                  tensor_type_text(dtype, shape), " (", bytes,
                                                  " bytes)"));
  }
  *value = DeviceTensor{arg.buffer->memory, bytes, dtype};
  return absl::OkStatus();
}

}  // namespace

std::string wrong_device_text(const tilert_device_s& actual, const tilert_device_s& expected) {
  if (actual.label == expected.label) return absl::StrCat(actual.label, " of another context");
  return absl::StrCat(actual.label, ", the kernel was loaded for ", expected.label);
}

absl::StatusOr<BoundLaunch> bind_launch_args(const Kernel& kernel, const tilert_device_s& device,
                                             std::span<const tilert_arg> args) {
  if (args.size() != kernel.num_params) {
    return absl::InvalidArgumentError(absl::StrCat("launch ", kernel.name, ": expected ",
                                                   kernel.num_params, " arguments, got ",
                                                   args.size()));
  }
  BoundLaunch bound;
  bound.values.resize(args.size());
  std::vector<int64_t> param_values(args.size(), 0);
  RETURN_IF_ERROR(bind_kinds_and_scalars(kernel, args, &param_values, &bound.values));

  absl::StatusOr<LaunchShape> shape = eval_launch_shape(kernel, param_values);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("launch ", kernel.name, ": ", shape.status().message()));
  }
  bound.shape = *std::move(shape);
  if (bound.shape.tensor_shapes.size() < args.size()) {
    return absl::InternalError(absl::StrCat("launch ", kernel.name,
                                            ": the launch shape lacks tensor shapes"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != TILERT_ARG_TENSOR) continue;
    RETURN_IF_ERROR(bind_tensor(kernel, i, args[i], bound.shape.tensor_shapes[i], device,
                                &bound.values[i]));
  }
  return bound;
}

}  // namespace tilert::runtime
