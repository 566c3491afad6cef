// How long a module takes from bytes to its first result through the public C API
// (tilert_module_load, the first tilert_launch, tilert_stream_sync), with the compiled-module
// cache off, cold (an empty cache directory) and warm (the same directory, a new context); then
// the host's cost per launch of back-to-back launches of a tiny kernel, next to raw
// cuLaunchKernel on a CUDA device. Prints tables; exits 0 with a message when the device is a
// CUDA device and there is none.
//
//   build/tests/bench/load_time FILE.tile|FILE.tbc [--device SPEC] [--kernel NAME]
//       [--repeats R] [--launches N] [--set NAME=VALUE]...
//
// --device: a device spec (default cuda). --kernel: the kernel launched (default the first).
// --repeats: measurements per row, median and minimum printed (default 5). --launches: the
// back-to-back launches (default 10000). --set: a scalar parameter's value (default: the
// signature's default). Tensors are zero-filled and shaped from the scalar values.
//
// Each measurement has its own context, buffers and stream, made before the clock starts; a
// context made first and kept to the end holds the device's primary context, so no row pays
// for creating it. CUDA_CACHE_DISABLE=1 is set (unless already set) before the driver starts:
// the driver's own JIT cache would otherwise make the uncached rows look warm too.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/ptx_emit.h"
#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"
#include "ir/param_eval.h"
#include "lowering/lower_kernel.h"
#include "tilert/tilert.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One thread block adds 1 to 32 floats: as little device work as a launch can carry.
constexpr const char* kTinyKernel = R"(kernel tiny(X: f32[N], N: i32 = 32) grid(1) threads(32) {
  fragment x: f32[32]
  copy X[0 +: 32] -> x
  parallel i in 0 .. 32 {
    x[i] = x[i] + 1.0
  }
  copy x -> X[0 +: 32]
}
)";

struct Options {
  std::string path;
  std::string device = "cuda";
  std::string kernel;
  int repeats = 5;
  int launches = 10000;
  std::map<std::string, std::string> set;
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "load_time: %s\nusage: load_time FILE.tile|FILE.tbc [--device SPEC] [--kernel NAME] "
               "[--repeats R] [--launches N] [--set NAME=VALUE]...\n",
               problem);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--device") o.device = value();
    else if (arg == "--kernel") o.kernel = value();
    else if (arg == "--repeats") o.repeats = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--launches") o.launches = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--set") {
      std::string kv = value();
      size_t eq = kv.find('=');
      if (eq == std::string::npos) usage("--set takes NAME=VALUE");
      o.set[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (!arg.empty() && arg[0] == '-') usage(("unknown option " + arg).c_str());
    else if (o.path.empty()) o.path = arg;
    else usage("more than one file");
  }
  if (o.path.empty()) usage("no file");
  return o;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "load_time: %s\n", what.c_str());
  std::exit(1);
}

void check(tilert_status status, const char* what) {
  if (status != TILERT_OK) fail(std::string(what) + ": " + tilert_last_error());
}

bool is_float(tilert_dtype t) {
  return t == TILERT_F16 || t == TILERT_BF16 || t == TILERT_F32 || t == TILERT_F64;
}

// The kernel's launch arguments, described once: scalar values and tensor shapes.
struct LaunchPlan {
  std::string kernel;
  std::vector<tilert_param_info> params;
  std::vector<int64_t> ints;                 // per parameter (scalars)
  std::vector<double> floats;                // per parameter (float scalars)
  std::vector<std::vector<int64_t>> shapes;  // per parameter (tensors)
};

// Reads the module with the runtime's own decoders to evaluate the tensor shapes (the C API
// gives parameters' types and defaults, not their shape expressions).
LaunchPlan plan_launch(const std::string& bytes, const std::string& path, const Options& options,
                       tilert_module module) {
  std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  absl::StatusOr<tilert::Module> ir = tilert::looks_like_bytecode(span) ? tilert::read_bytecode(span)
                                                                        : tilert::parse_tile(bytes, path);
  if (!ir.ok()) fail(std::string(ir.status().message()));
  LaunchPlan plan;
  plan.kernel = options.kernel.empty() ? tilert_module_kernel_name(module, 0) : options.kernel;
  const tilert::Kernel* kernel = ir->find_kernel(plan.kernel);
  if (kernel == nullptr) fail("no kernel " + plan.kernel + " in " + path);
  tilert_kernel handle = nullptr;
  check(tilert_kernel_get(module, plan.kernel.c_str(), &handle), "tilert_kernel_get");
  const int32_t count = tilert_kernel_param_count(handle);
  plan.ints.assign(count, 0);
  plan.floats.assign(count, 0);
  for (int32_t i = 0; i < count; ++i) {
    tilert_param_info info;
    check(tilert_kernel_param_info(handle, i, &info), "tilert_kernel_param_info");
    plan.params.push_back(info);
    if (info.is_tensor) continue;
    auto given = options.set.find(info.name);
    if (given != options.set.end()) {
      plan.ints[i] = std::atoll(given->second.c_str());
      plan.floats[i] = std::atof(given->second.c_str());
    } else if (info.has_default) {
      plan.ints[i] = info.default_int;
      plan.floats[i] = is_float(info.dtype) ? info.default_float : static_cast<double>(info.default_int);
    } else {
      fail(std::string("parameter ") + info.name + " has no default: give --set " + info.name + "=VALUE");
    }
  }
  absl::StatusOr<tilert::LaunchShape> shape = tilert::eval_launch_shape(*kernel, plan.ints);
  if (!shape.ok()) fail(std::string(shape.status().message()));
  plan.shapes = shape->tensor_shapes;
  plan.shapes.resize(count);
  return plan;
}

// A context with the device, zero-filled buffers for the plan's tensors and a stream.
struct Session {
  tilert_context context = nullptr;
  tilert_device device = nullptr;
  tilert_stream stream = nullptr;
  std::vector<tilert_buffer> buffers;
  std::vector<tilert_arg> args;

  Session(const std::string& spec, const LaunchPlan* plan) {
    check(tilert_context_create(&context), "tilert_context_create");
    check(tilert_device_find(context, spec.c_str(), &device), "tilert_device_find");
    check(tilert_stream_create(context, device, &stream), "tilert_stream_create");
    if (plan == nullptr) return;
    for (size_t i = 0; i < plan->params.size(); ++i) {
      const tilert_param_info& p = plan->params[i];
      if (!p.is_tensor) {
        args.push_back(is_float(p.dtype) ? tilert_arg_float(plan->floats[i]) : tilert_arg_int(plan->ints[i]));
        continue;
      }
      size_t bytes = tilert_dtype_size(p.dtype);
      for (int64_t extent : plan->shapes[i]) bytes *= static_cast<size_t>(extent);
      bytes = std::max<size_t>(bytes, 4);
      tilert_buffer buffer = nullptr;
      check(tilert_buffer_create(context, device, bytes, &buffer), "tilert_buffer_create");
      std::vector<char> zeros(bytes, 0);
      check(tilert_buffer_upload(buffer, 0, zeros.data(), bytes), "tilert_buffer_upload");
      buffers.push_back(buffer);
      args.push_back(tilert_arg_tensor(buffer, p.dtype, static_cast<int32_t>(plan->shapes[i].size()),
                                       plan->shapes[i].data()));
    }
  }
  ~Session() {
    tilert_stream_destroy(stream);
    for (tilert_buffer b : buffers) tilert_buffer_destroy(b);
    tilert_context_destroy(context);
  }
};

struct Sample {
  double load = 0, launch = 0, sync = 0;
  double total() const { return load + launch + sync; }
};

Sample measure_first_result(const Options& options, const std::string& bytes, const LaunchPlan& plan) {
  Session session(options.device, &plan);
  Sample s;
  auto start = Clock::now();
  tilert_module module = nullptr;
  check(tilert_module_load(session.context, session.device, bytes.data(), bytes.size(), &module),
        "tilert_module_load");
  s.load = ms_since(start);
  start = Clock::now();
  tilert_kernel kernel = nullptr;
  check(tilert_kernel_get(module, plan.kernel.c_str(), &kernel), "tilert_kernel_get");
  check(tilert_launch(kernel, session.stream, session.args.data(), session.args.size()), "tilert_launch");
  s.launch = ms_since(start);
  start = Clock::now();
  check(tilert_stream_sync(session.stream), "tilert_stream_sync");
  s.sync = ms_since(start);
  tilert_module_destroy(module);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void print_row(const char* name, const std::vector<Sample>& samples) {
  auto column = [&](double (*get)(const Sample&)) {
    std::vector<double> v;
    for (const Sample& s : samples) v.push_back(get(s));
    char cell[64];
    std::snprintf(cell, sizeof cell, "%9.3f %9.3f", median(v), *std::min_element(v.begin(), v.end()));
    return std::string(cell);
  };
  std::printf("%-22s %s   %s   %s   %s\n", name, column([](const Sample& s) { return s.load; }).c_str(),
              column([](const Sample& s) { return s.launch; }).c_str(),
              column([](const Sample& s) { return s.sync; }).c_str(),
              column([](const Sample& s) { return s.total(); }).c_str());
}

int count_entries(const std::string& dir) {
  std::error_code error;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(dir + "/cuda", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++n;
  return n;
}

// N launches of `kernel` without waiting, then one sync: microseconds per launch for the
// launches alone and with the sync.
std::pair<double, double> time_launches(int n, auto launch, auto sync) {
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) launch();
  double enqueue = ms_since(start);
  sync();
  double all = ms_since(start);
  return {enqueue * 1000 / n, all * 1000 / n};
}

void print_launch_row(const char* name, std::pair<double, double> us) {
  std::printf("%-34s %12.3f %16.3f\n", name, us.first, us.second);
}

// The same tiny kernel launched with cuLaunchKernel alone: lowered and emitted as the runtime
// does, its context made current once, parameters prepared once.
void raw_launches(int n, const tilert::Kernel& tiny) {
  using namespace tilert;
  absl::StatusOr<std::shared_ptr<cuda::Driver>> driver = cuda::Driver::load();
  if (!driver.ok()) return print_launch_row("cuLaunchKernel: no driver", {0, 0});
  absl::StatusOr<std::vector<cuda::DeviceInfo>> devices = (*driver)->devices();
  if (!devices.ok() || devices->empty()) return;
  const cuda::DeviceInfo& info = devices->front();
  absl::StatusOr<lowering::TargetDescription> target =
      lowering::parse_target(info.compute_major == 9 && info.compute_minor == 0 ? "ptx:sm_90a" : "ptx:sm_80");
  absl::StatusOr<std::shared_ptr<cuda::Device>> device = cuda::Device::open(*driver, info.ordinal);
  if (!target.ok() || !device.ok()) fail("cannot open cuda:0 directly");
  absl::StatusOr<simt::Function> f = lowering::lower_kernel(tiny, *target);
  if (!f.ok()) fail(std::string(f.status().message()));
  absl::StatusOr<std::string> ptx = cuda::emit_ptx(*f, *target);
  if (!ptx.ok()) fail(std::string(ptx.status().message()));
  absl::StatusOr<std::shared_ptr<cuda::Module>> module = (*device)->load_module(*ptx);
  if (!module.ok()) fail(std::string(module.status().message()));
  absl::StatusOr<void*> function = (*module)->function(f->name);
  absl::StatusOr<uint64_t> x = (*device)->alloc(32 * 4);
  absl::StatusOr<uint64_t> status = (*device)->alloc(simt::kStatusWords * 4);
  absl::StatusOr<std::shared_ptr<cuda::Stream>> stream = (*device)->create_stream();
  if (!function.ok() || !x.ok() || !status.ok() || !stream.ok()) fail("cannot set up the raw launch");
  if (!(*device)->zero(*x, 32).ok() || !(*device)->zero(*status, simt::kStatusWords).ok())
    fail("cannot zero the raw launch's buffers");
  // Every parameter in an 8-byte slot: arrays as addresses, the i32 N in the low bytes.
  std::vector<uint64_t> slots(f->params.size());
  std::vector<void*> pointers(f->params.size());
  for (size_t i = 0; i < f->params.size(); ++i) {
    slots[i] = static_cast<int32_t>(i) == f->status_param ? *status : f->params[i].is_array ? *x : 32;
    pointers[i] = &slots[i];
  }
  if (!(*device)->make_current().ok()) fail("cuCtxSetCurrent failed");
  const cuda::DriverApi& cu = cuda::api(**driver);
  auto fn = static_cast<CUfunction>(*function);
  auto handle = static_cast<CUstream>((*stream)->handle());
  CUresult first = CUDA_SUCCESS;
  auto launch = [&] {
    CUresult r = cu.cuLaunchKernel(fn, 1, 1, 1, static_cast<unsigned>(f->threads), 1, 1, 0, handle,
                                   pointers.data(), nullptr);
    if (first == CUDA_SUCCESS) first = r;
  };
  auto sync = [&] {
    CUresult r = cu.cuStreamSynchronize(handle);
    if (first == CUDA_SUCCESS) first = r;
  };
  launch();
  sync();
  std::pair<double, double> us = time_launches(n, launch, sync);
  if (first != CUDA_SUCCESS) fail("cuLaunchKernel failed: CUresult " + std::to_string(first));
  print_launch_row("cuLaunchKernel", us);
  (*device)->free(*x);
  (*device)->free(*status);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::ifstream in(options.path, std::ios::binary);
  if (!in) fail("cannot read " + options.path);
  std::stringstream contents;
  contents << in.rdbuf();
  const std::string bytes = contents.str();

  // Before anything starts the driver (it reads the variable once).
  setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);

  // Kept to the end: holds the device (and a CUDA device's primary context) for every row.
  tilert_context keeper = nullptr;
  check(tilert_context_create(&keeper), "tilert_context_create");
  tilert_device device = nullptr;
  if (tilert_device_find(keeper, options.device.c_str(), &device) != TILERT_OK) {
    std::string reason = tilert_last_error();
    const bool cuda = options.device.rfind("cuda", 0) == 0;
    std::printf("load_time: no device %s: %s\n%s\n", options.device.c_str(), reason.c_str(),
                cuda ? "no CUDA device here: nothing measured" : "");
    tilert_context_destroy(keeper);
    return cuda ? 0 : 1;
  }
  tilert_device_info info;
  check(tilert_device_get_info(device, &info), "tilert_device_get_info");
  tilert_buffer hold = nullptr;
  check(tilert_buffer_create(keeper, device, 4, &hold), "tilert_buffer_create");
  // Loaded once uncached, leaving the user's cache alone: it also pays the driver's one-time
  // costs (loading its JIT compiler), which no row should carry.
  setenv("TILERT_CACHE_DIR", "off", 1);
  tilert_module planning = nullptr;
  check(tilert_module_load(keeper, device, bytes.data(), bytes.size(), &planning), "tilert_module_load");
  const LaunchPlan plan = plan_launch(bytes, options.path, options, planning);
  tilert_module_destroy(planning);

  std::string cache_root = (std::filesystem::temp_directory_path() / "tilert_load_time_XXXXXX").string();
  if (mkdtemp(cache_root.data()) == nullptr) fail("cannot create a temporary directory");

  std::printf("load_time: %s, kernel %s, %s (%s, %s), %d repetitions\n", options.path.c_str(),
              plan.kernel.c_str(), options.device.c_str(), info.name, info.driver, options.repeats);
  std::printf("CUDA_CACHE_DISABLE=%s; cache directories under %s\n\n", std::getenv("CUDA_CACHE_DISABLE"),
              cache_root.c_str());
  std::printf("%-22s %19s   %19s   %19s   %19s\n", "", "tilert_module_load", "first tilert_launch",
              "tilert_stream_sync", "total");
  std::printf("%-22s %9s %9s   %9s %9s   %9s %9s   %9s %9s\n", "ms", "median", "min", "median", "min",
              "median", "min", "median", "min");

  std::vector<Sample> off, cold, warm;
  for (int r = 0; r < options.repeats; ++r) off.push_back(measure_first_result(options, bytes, plan));
  print_row("cache off", off);
  std::string cold_dir;
  for (int r = 0; r < options.repeats; ++r) {
    cold_dir = cache_root + "/cold-" + std::to_string(r);
    setenv("TILERT_CACHE_DIR", cold_dir.c_str(), 1);
    cold.push_back(measure_first_result(options, bytes, plan));
  }
  print_row("cold (empty cache)", cold);
  setenv("TILERT_CACHE_DIR", cold_dir.c_str(), 1);
  for (int r = 0; r < options.repeats; ++r) warm.push_back(measure_first_result(options, bytes, plan));
  print_row("warm (same cache)", warm);
  const int entries = count_entries(cold_dir);
  std::printf("\nthe cold run stored %d cache entr%s in %s/cuda%s\n", entries, entries == 1 ? "y" : "ies",
              cold_dir.c_str(),
              info.kind == TILERT_DEVICE_CUDA ? (entries == 0 ? " (none: the warm row is not warm)" : "")
                                              : " (the cache serves cuda devices only)");

  // The host's cost of a launch: the tiny kernel, loaded once, launched back to back.
  absl::StatusOr<tilert::Module> tiny_ir = tilert::parse_tile(kTinyKernel, "<tiny>");
  if (!tiny_ir.ok()) fail(std::string(tiny_ir.status().message()));
  {
    Session session(options.device, nullptr);
    tilert_module tiny = nullptr;
    check(tilert_module_load(session.context, session.device, kTinyKernel, std::strlen(kTinyKernel), &tiny),
          "tilert_module_load (tiny)");
    tilert_kernel kernel = nullptr;
    check(tilert_kernel_get(tiny, "tiny", &kernel), "tilert_kernel_get");
    tilert_buffer x = nullptr;
    check(tilert_buffer_create(session.context, session.device, 32 * 4, &x), "tilert_buffer_create");
    std::vector<float> zeros(32, 0.0f);
    check(tilert_buffer_upload(x, 0, zeros.data(), 32 * 4), "tilert_buffer_upload");
    const int64_t shape[1] = {32};
    tilert_arg args[] = {tilert_arg_tensor(x, TILERT_F32, 1, shape), tilert_arg_int(32)};
    auto launch = [&] { check(tilert_launch(kernel, session.stream, args, 2), "tilert_launch"); };
    auto sync = [&] { check(tilert_stream_sync(session.stream), "tilert_stream_sync"); };
    launch();
    sync();
    std::printf("\n%d back-to-back launches of a 1-block, 32-thread kernel, microseconds per launch\n",
                options.launches);
    std::printf("%-34s %12s %16s\n", "", "launch only", "launch + sync/N");
    print_launch_row("tilert_launch", time_launches(options.launches, launch, sync));
    tilert_buffer_destroy(x);
    tilert_module_destroy(tiny);
  }
  if (info.kind == TILERT_DEVICE_CUDA) raw_launches(options.launches, tiny_ir->kernels.front());

  std::filesystem::remove_all(cache_root);
  tilert_buffer_destroy(hold);
  tilert_context_destroy(keeper);
  return 0;
}
