#include "frontends/cli/checked_run.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/cpu/cpu_backend.h"
#include "ir/bytecode/bytecode.h"
#include "ir/param_eval.h"
#include "ir/status.h"

namespace tilert::check {
namespace {

using cli::api_status;

// One tensor argument on the host: its elements in the parameter's dtype (what the device gets)
// and the same values as f64 (what the reference gets).
struct HostTensor {
  uint32_t param = 0;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  int64_t elements = 0;
  std::vector<uint8_t> bytes;
  std::vector<double> reference;
};

// Floats are uniform in [-1, 1] (then rounded to the dtype, so both runs see identical values);
// integers are small so that sums and products stay far from overflow.
double random_element(std::mt19937_64& rng, DType dtype) {
  switch (dtype_kind(dtype)) {
    case DTypeKind::kFloat:
      return round_to_dtype(std::uniform_real_distribution<double>(-1.0, 1.0)(rng), dtype);
    case DTypeKind::kSigned:
      return static_cast<double>(std::uniform_int_distribution<int>(-4, 4)(rng));
    case DTypeKind::kUnsigned:
      return static_cast<double>(std::uniform_int_distribution<int>(0, 8)(rng));
    case DTypeKind::kBool:
      return static_cast<double>(std::uniform_int_distribution<int>(0, 1)(rng));
  }
  return 0.0;
}

absl::StatusOr<std::vector<HostTensor>> make_inputs(const Kernel& kernel, const LaunchShape& shape,
                                                    const CheckOptions& options) {
  std::vector<HostTensor> tensors;
  int64_t total = 0;
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    const Symbol& param = kernel.symbols[p];
    if (param.kind != SymbolKind::kTensorParam) continue;
    HostTensor t{.param = p, .dtype = param.dtype, .shape = shape.tensor_shapes[p]};
    t.elements = 1;
    for (int64_t extent : t.shape) {
      if (extent > 0 && t.elements > kMaxCheckedElements / extent) {
        t.elements = kMaxCheckedElements + 1;
        break;
      }
      t.elements *= std::max<int64_t>(extent, 0);
    }
    total += t.elements;
    if (total > kMaxCheckedElements) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "tensor ", param.name, " brings the inputs over ", kMaxCheckedElements,
          " elements; choose smaller sizes"));
    }
    // Each tensor draws from its own stream, so adding a parameter does not change the others.
    std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull + p);
    t.bytes.resize(static_cast<size_t>(t.elements) * dtype_size(t.dtype));
    t.reference.resize(t.elements);
    for (int64_t i = 0; i < t.elements; ++i) {
      double v = random_element(rng, t.dtype);
      store_element(t.bytes.data() + i * dtype_size(t.dtype), t.dtype, v);
      t.reference[i] = load_element(t.bytes.data() + i * dtype_size(t.dtype), t.dtype);
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

tilert_arg scalar_arg(const ScalarValue& v) {
  return v.is_float ? tilert_arg_float(v.float_value) : tilert_arg_int(v.int_value);
}

// The device side of one checked run: buffers holding the inputs, and the argument list.
struct DeviceArgs {
  std::vector<cli::BufferHandle> buffers;  // parallel to the HostTensors
  std::vector<tilert_arg> args;
};

absl::StatusOr<DeviceArgs> upload_inputs(tilert_context context, tilert_device device,
                                         const Kernel& kernel, std::span<const HostTensor> tensors,
                                         std::span<const ScalarValue> scalars) {
  DeviceArgs d;
  d.args.resize(kernel.num_params);
  for (uint32_t p = 0; p < kernel.num_params; ++p) d.args[p] = scalar_arg(scalars[p]);
  for (const HostTensor& t : tensors) {
    const std::string& name = kernel.symbols[t.param].name;
    if (t.shape.size() > TILERT_MAX_RANK) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", name, " has rank ", t.shape.size(),
                                                     "; launches take at most ", TILERT_MAX_RANK));
    }
    tilert_buffer raw = nullptr;
    // A zero-element tensor still gets a (one-byte) buffer: the argument must name one.
    RETURN_IF_ERROR(api_status(
        tilert_buffer_create(context, device, std::max<size_t>(t.bytes.size(), 1), &raw),
        absl::StrCat("creating the buffer for ", name)));
    d.buffers.emplace_back(raw);
    if (!t.bytes.empty()) {
      RETURN_IF_ERROR(api_status(tilert_buffer_upload(raw, 0, t.bytes.data(), t.bytes.size()),
                                 absl::StrCat("uploading ", name)));
    }
    d.args[t.param] = tilert_arg_tensor(raw, static_cast<tilert_dtype>(t.dtype),
                                        static_cast<int32_t>(t.shape.size()), t.shape.data());
  }
  return d;
}

absl::StatusOr<double> timed_launch(tilert_kernel kernel, tilert_stream stream,
                                    std::span<const tilert_arg> args, const std::string& name) {
  auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(api_status(tilert_launch(kernel, stream, args.data(), args.size()),
                             absl::StrCat("launching ", name)));
  RETURN_IF_ERROR(api_status(tilert_stream_sync(stream), absl::StrCat("running ", name)));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::Status run_reference(const Kernel& kernel, std::span<HostTensor> tensors,
                           std::span<const ScalarValue> scalars, bool check_races) {
  std::vector<cpu::ArgValue> args(kernel.num_params);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    if (scalars[p].is_float) {
      args[p] = scalars[p].float_value;
    } else {
      args[p] = scalars[p].int_value;
    }
  }
  for (HostTensor& t : tensors) {
    args[t.param] = cpu::TensorArg{.data = t.reference.data(),
                                   .size_bytes = t.reference.size() * sizeof(double),
                                   .storage = DType::kF64};
  }
  cpu::RunOptions options;
  options.precision = cpu::Precision::kFloat64;
  options.check_races = check_races;
  absl::Status s = cpu::run_kernel(kernel, args, options);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("float64 reference run of ", kernel.name, ": ",
                                               s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> download_values(tilert_buffer buffer, const HostTensor& t,
                                                    const std::string& name) {
  std::vector<uint8_t> bytes(t.bytes.size());
  if (!bytes.empty()) {
    RETURN_IF_ERROR(api_status(tilert_buffer_download(buffer, 0, bytes.data(), bytes.size()),
                               absl::StrCat("downloading ", name)));
  }
  std::vector<double> values(t.elements);
  for (int64_t i = 0; i < t.elements; ++i) {
    values[i] = load_element(bytes.data() + i * dtype_size(t.dtype), t.dtype);
  }
  return values;
}

}  // namespace

bool CheckedRun::passed() const {
  return std::all_of(comparisons.begin(), comparisons.end(),
                     [](const TensorComparison& c) { return c.ok(); });
}

absl::StatusOr<CheckedRun> checked_run(tilert_context context, tilert_device device,
                                       tilert_kernel kernel_handle, const Kernel& kernel,
                                       std::span<const ScalarValue> scalars,
                                       const CheckOptions& options) {
  if (scalars.size() != kernel.num_params) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", kernel.name, " takes ",
                                                   kernel.num_params, " parameters, got ",
                                                   scalars.size()));
  }
  std::vector<int64_t> ints = integer_param_values(scalars);
  ASSIGN_OR_RETURN(LaunchShape shape, eval_launch_shape(kernel, ints));
  ASSIGN_OR_RETURN(std::vector<HostTensor> tensors, make_inputs(kernel, shape, options));
  ASSIGN_OR_RETURN(DeviceArgs device_args,
                   upload_inputs(context, device, kernel, tensors, scalars));
  tilert_stream raw_stream = nullptr;
  RETURN_IF_ERROR(api_status(tilert_stream_create(context, device, &raw_stream),
                             "creating a stream"));
  cli::StreamHandle stream(raw_stream);

  if (options.check_races) {
    // On copies: the reference run that --check compares with starts from the inputs again.
    std::vector<HostTensor> copies = tensors;
    RETURN_IF_ERROR(run_reference(kernel, copies, scalars, true));
  }
  CheckedRun run;
  run.tolerance_depth = tolerance_depth(kernel, scalars);
  ASSIGN_OR_RETURN(run.launch_seconds,
                   timed_launch(kernel_handle, raw_stream, device_args.args, kernel.name));
  if (options.compare) {
    // Download before any bench launch: kernels that accumulate into an output change it again.
    std::vector<std::vector<double>> device_values;
    for (size_t i = 0; i < tensors.size(); ++i) {
      ASSIGN_OR_RETURN(auto values,
                       download_values(device_args.buffers[i].get(), tensors[i],
                                       kernel.symbols[tensors[i].param].name));
      device_values.push_back(std::move(values));
    }
    RETURN_IF_ERROR(run_reference(kernel, tensors, scalars, false));
    for (size_t i = 0; i < tensors.size(); ++i) {
      const HostTensor& t = tensors[i];
      run.comparisons.push_back(compare_tensor(kernel.symbols[t.param].name, t.dtype, t.shape,
                                               device_values[i], t.reference,
                                               tolerance_for(t.dtype, run.tolerance_depth)));
    }
  }
  if (options.bench_launches > 0 && options.warmup_ms > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.warmup_ms);
    while (std::chrono::steady_clock::now() < until)
      RETURN_IF_ERROR(timed_launch(kernel_handle, raw_stream, device_args.args, kernel.name).status());
  }
  for (int i = 0; i < options.bench_launches; ++i) {
    ASSIGN_OR_RETURN(double seconds,
                     timed_launch(kernel_handle, raw_stream, device_args.args, kernel.name));
    run.bench_seconds.push_back(seconds);
  }
  return run;
}

absl::StatusOr<cli::ModuleHandle> load_module(tilert_context context, tilert_device device,
                                              const Module& module) {
  std::vector<uint8_t> bytes = write_bytecode(module);
  tilert_module raw = nullptr;
  RETURN_IF_ERROR(api_status(tilert_module_load(context, device, bytes.data(), bytes.size(), &raw),
                             "loading the module"));
  return cli::ModuleHandle(raw);
}

std::string format_bench(std::span<const double> seconds) {
  if (seconds.empty()) return "no launches";
  std::vector<double> sorted(seconds.begin(), seconds.end());
  std::sort(sorted.begin(), sorted.end());
  size_t mid = sorted.size() / 2;
  double median = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return absl::StrFormat("min %.3f ms, median %.3f ms", sorted.front() * 1e3, median * 1e3);
}

}  // namespace tilert::check
