// run_kernel: binds arguments, then runs the grid cluster by cluster on a pool of host threads.
#include <thread>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/executor.h"
#include "ir/param_eval.h"
#include "ir/status.h"

namespace tilert::cpu {
namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxBlocksPerCluster = 16;

absl::Status bind_scalar(const Kernel& k, uint32_t p, const ArgValue& arg, LaunchState* launch,
                         int64_t* param_value) {
  const Symbol& s = k.symbols[p];
  if (const int64_t* i = std::get_if<int64_t>(&arg)) {
    *param_value = *i;
    launch->scalars[p] = convert(Value::integer(*i), s.dtype, launch->exact());
    return absl::OkStatus();
  }
  if (const double* d = std::get_if<double>(&arg)) {
    if (!is_float(s.dtype))
      return absl::InvalidArgumentError(absl::StrCat("kernel ", k.name, ": argument ", p, " (", s.name, ": ",
                                                     av(dtype_name(s.dtype)), ") needs an integer, got ", *d));
    launch->scalars[p] = convert(Value::real(*d), s.dtype, launch->exact());
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kernel ", k.name, ": argument ", p, " (", s.name, ") is a scalar, got a tensor"));
}

absl::Status bind_tensor(const Kernel& k, uint32_t p, const ArgValue& arg, const std::vector<int64_t>& shape,
                         LaunchState* launch) {
  const Symbol& s = k.symbols[p];
  const TensorArg* t = std::get_if<TensorArg>(&arg);
  std::string what = absl::StrCat("kernel ", k.name, ": argument ", p, " (", s.name, ")");
  if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is a tensor, got a scalar"));
  GlobalTensor& g = launch->tensors[p];
  g.name = s.name;
  g.dtype = s.dtype;
  g.storage = t->storage;
  g.data = static_cast<std::byte*>(t->data);
  g.shape = shape;
  g.strides = row_major_strides(shape);
  g.round_reads = launch->exact();
  // Overflow-safe: shapes are non-negative, and a product beyond the argument's bytes fails.
  uint64_t needed = static_cast<uint64_t>(dtype_size(t->storage));
  for (int64_t n : shape) {
    if (n != 0 && needed > (uint64_t{1} << 62) / static_cast<uint64_t>(n))
      return absl::InvalidArgumentError(absl::StrCat(what, ": shape too large"));
    needed *= static_cast<uint64_t>(n);
  }
  if (element_count(shape) == 0) return absl::OkStatus();
  if (t->data == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " has no data"));
  if (t->size_bytes < needed)
    return absl::InvalidArgumentError(absl::StrCat(what, " holds ", t->size_bytes, " bytes; its shape needs ",
                                                   needed, " (", element_count(shape), " x ",
                                                   av(dtype_name(t->storage)), ")"));
  return absl::OkStatus();
}

absl::Status bind_arguments(const Kernel& k, std::span<const ArgValue> args, LaunchState* launch,
                            LaunchShape* shape) {
  if (k.num_params > k.symbols.size())
    return absl::InvalidArgumentError(absl::StrCat("kernel ", k.name, ": more parameters than symbols"));
  if (args.size() != k.num_params)
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", k.name, ": expects ", k.num_params, " arguments, got ", args.size()));
  launch->scalars.assign(k.num_params, Value{});
  launch->tensors.assign(k.num_params, GlobalTensor{});
  std::vector<int64_t> param_values(k.num_params, 0);
  for (uint32_t p = 0; p < k.num_params; ++p) {
    if (k.symbols[p].kind == SymbolKind::kScalarParam)
      RETURN_IF_ERROR(bind_scalar(k, p, args[p], launch, &param_values[p]));
  }
  ASSIGN_OR_RETURN(*shape, eval_launch_shape(k, param_values));
  for (uint32_t p = 0; p < k.num_params; ++p) {
    if (k.symbols[p].kind == SymbolKind::kTensorParam)
      RETURN_IF_ERROR(bind_tensor(k, p, args[p], shape->tensor_shapes[p], launch));
  }
  return absl::OkStatus();
}

std::string block_name(const int64_t index[3]) {
  return absl::StrCat("(", index[0], ",", index[1], ",", index[2], ")");
}

// Runs the blocks of one cluster (starting at block `origin`) as cooperating root tasks.
absl::Status run_cluster(LaunchState& launch, const int64_t origin[3], const int64_t cluster[3],
                         int64_t threads, const RunOptions& options) {
  const Kernel& k = launch.kernel;
  ClusterState state;
  int64_t blocks = cluster[0] * cluster[1] * cluster[2];
  state.threads = blocks * threads;
  state.many_blocks = blocks > 1;
  std::vector<std::unique_ptr<BlockState>> block_states;
  std::vector<std::string> labels;
  for (int64_t z = 0; z < cluster[2]; ++z)
    for (int64_t y = 0; y < cluster[1]; ++y)
      for (int64_t x = 0; x < cluster[0]; ++x) {
        auto b = std::make_unique<BlockState>();
        b->index[0] = origin[0] + x;
        b->index[1] = origin[1] + y;
        b->index[2] = origin[2] + z;
        b->threads = threads;
        b->tiles.resize(k.symbols.size());
        b->mbarriers.resize(k.symbols.size());
        b->cluster = &state;
        std::string range = absl::StrCat("threads 0..", threads - 1);
        labels.push_back(state.many_blocks ? absl::StrCat("block ", block_name(b->index), " ", range) : range);
        block_states.push_back(std::move(b));
      }
  const int64_t* last = block_states.back()->index;
  std::string where = state.many_blocks
      ? absl::StrCat("cluster of blocks ", block_name(origin), "..", block_name(last))
      : absl::StrCat("block ", block_name(origin));
  state.scheduler = std::make_unique<ClusterScheduler>(
      absl::StrCat("deadlock in kernel ", k.name, " ", where), absl::StrCat("kernel ", k.name, " ", where),
      std::chrono::milliseconds(std::max(1, options.watchdog_ms)), &launch.cancelled);
  if (options.check_races) state.races = std::make_unique<RaceChecker>(k.name);
  std::vector<ClusterScheduler::Body> bodies;
  for (auto& b : block_states) {
    bodies.push_back([&launch, &state, block = b.get(), threads](Task& task) {
      TaskExecutor executor(launch, *block, *state.scheduler, task);
      if (state.races) executor.set_races(state.races->start_root(*block));
      return executor.run(launch.kernel.body, ActiveThreads::all(0, threads));
    });
  }
  return state.scheduler->run_roots(labels, bodies);
}

absl::Status check_kernel_shape(const Kernel& k, const LaunchShape& shape, int64_t cluster[3]) {
  if (shape.threads < 1 || shape.threads > kMaxThreadsPerBlock)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", k.name, ": threads(", shape.threads,
                                                   ") is outside 1..", kMaxThreadsPerBlock));
  if (k.cluster.size() > 3)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", k.name, ": cluster has more than 3 dimensions"));
  for (size_t d = 0; d < k.cluster.size(); ++d) cluster[d] = k.cluster[d];
  int64_t blocks = 1;
  for (int d = 0; d < 3; ++d) {
    if (cluster[d] < 1 || cluster[d] > kMaxBlocksPerCluster || shape.grid[d] % cluster[d] != 0)
      return absl::InvalidArgumentError(absl::StrCat("kernel ", k.name, ": cluster dimension ", d, " (",
                                                     cluster[d], ") must be 1..", kMaxBlocksPerCluster,
                                                     " and divide grid dimension ", d, " (", shape.grid[d], ")"));
    blocks *= cluster[d];
  }
  if (blocks > kMaxBlocksPerCluster)
    return absl::InvalidArgumentError(absl::StrCat("kernel ", k.name, ": a cluster of ", blocks, " blocks is more than ",
                                                   kMaxBlocksPerCluster));
  return absl::OkStatus();
}

}  // namespace

absl::Status run_kernel(const Kernel& kernel, std::span<const ArgValue> args, const RunOptions& options) {
  LaunchState launch(kernel);
  launch.precision = options.precision;
  LaunchShape shape;
  RETURN_IF_ERROR(bind_arguments(kernel, args, &launch, &shape));
  int64_t cluster[3] = {1, 1, 1};
  RETURN_IF_ERROR(check_kernel_shape(kernel, shape, cluster));
  int64_t clusters_per_dim[3];
  for (int d = 0; d < 3; ++d) clusters_per_dim[d] = shape.grid[d] / cluster[d];
  int64_t clusters = clusters_per_dim[0] * clusters_per_dim[1] * clusters_per_dim[2];

  std::atomic<int64_t> next{0};
  std::mutex error_mutex;
  absl::Status first_error;
  auto worker = [&] {
    for (int64_t c = next++; c < clusters && !launch.cancelled; c = next++) {
      int64_t origin[3] = {c % clusters_per_dim[0] * cluster[0],
                           c / clusters_per_dim[0] % clusters_per_dim[1] * cluster[1],
                           c / (clusters_per_dim[0] * clusters_per_dim[1]) * cluster[2]};
      absl::Status status = run_cluster(launch, origin, cluster, shape.threads, options);
      if (status.ok()) continue;
      std::lock_guard<std::mutex> lock(error_mutex);
      if (first_error.ok()) first_error = status;
      launch.cancelled = true;
    }
  };
  int64_t workers = options.num_threads > 0 ? options.num_threads
                                            : std::max<int64_t>(1, std::thread::hardware_concurrency());
  workers = std::min(workers, clusters);
  std::vector<std::thread> pool;
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return first_error;
}

}  // namespace tilert::cpu
