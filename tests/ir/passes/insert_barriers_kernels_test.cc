// The barrier pass over every example and sync test kernel, and the barrier-free variants: each
// gets its hand-checked minimum, stays valid, is stable under a second run, and computes exactly
// what the original computes on the CPU reference.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/param_eval.h"
#include "ir/passes/insert_barriers.h"
#include "ir/verify/verify.h"
#include "pass_test_util.h"

namespace tilert {
namespace {

struct Expected {
  const char* file;    // relative to the source root
  const char* kernel;
  int inserted;
  int removed;
};

// Worked out by hand from each kernel.
constexpr Expected kExpected[] = {
    // Fragments only (per-thread registers): nothing to order.
    {"examples/gelu.tile", "gelu", 0, 0},
    {"examples/row_sum.tile", "row_sum", 0, 0},
    {"examples/softmax.tile", "softmax", 0, 0},
    // RAW copies -> gemm; loop-carried WAR gemm -> next iteration's copies (top of the body).
    {"examples/gemm.tile", "gemm", 2, 0},
    {"examples/gemm.tile", "gemm_bf16", 2, 0},
    // RAW K copy -> gemm Qs, Ks (covers Qs from before the loop too); Vs is read after that
    // barrier, its WAR with the next copy is carried to the top of the body.
    {"examples/flash_attention.tile", "flash_attention", 2, 0},
    // Roles synchronize by hand through mbarriers: left alone.
    {"examples/gemm_ws.tile", "gemm_ws", 0, 0},
    {"tests/kernels/sync/mbarrier_ring3.tile", "mbarrier_ring3", 0, 0},
    {"tests/kernels/sync/named_barrier_roles.tile", "named_barrier_roles", 0, 0},
    // The hand barrier orders copy -> partial_s before the atomics read it: kept, nothing added.
    {"tests/kernels/sync/atomic_column_sum.tile", "atomic_column_sum", 0, 0},
    // Global W is written, then read back across cluster_sync, which orders it already.
    {"tests/kernels/sync/cluster_exchange.tile", "cluster_exchange", 0, 0},
    // Thread-level global accesses that never touch the same tensor with a write.
    {"tests/kernels/sync/divergent_write.tile", "divergent_write", 0, 0},
    // RAW copy -> transposed read; carried WAR read -> next copy.
    {"tests/kernels/sync/implicit_barriers_transpose.tile", "implicit_barriers_transpose", 2, 0},
    {"tests/kernels/sync/pipelined_gemm_stages1.tile", "pipelined_gemm_stages1", 2, 0},
    {"tests/kernels/sync/pipelined_gemm_stages2.tile", "pipelined_gemm_stages2", 2, 0},
    {"tests/kernels/sync/pipelined_gemm_stages4.tile", "pipelined_gemm_stages4", 2, 0},
    // slot[tx] = v, then three tree steps under `if tx % 8 < s`, each reading slots other threads
    // wrote: the subgroup barriers cannot be proved enough, so a block barrier goes before each
    // step (3); the hand barrier before thread 0's final sum stays.
    {"tests/kernels/sync/subgroup_reduce.tile", "subgroup_reduce", 3, 0},
    // RAW stage 0 copies -> gemm 0, RAW stage 1 copies -> gemm 1; stage 1's copies need no wait
    // for gemm 0 (As[0] vs As[1]) and the next stage 0 copies none for gemm 1.
    {"tests/kernels/barrier_free/gemm_double_buffer.tile", "gemm_double_buffer", 2, 0},
    // RAW xs -> masked read; RAW stats[0] + WAR xs -> exp; RAW xs -> copy back; RAW stats[1] +
    // WAR xs -> divide; RAW xs -> store.
    {"tests/kernels/barrier_free/softmax_shared.tile", "softmax_shared", 5, 0},
    // RAW Ps (and Vs) -> gemm 2; one barrier between the K and V copies covers the carried WAR
    // gemm 2 reads Vs -> next V copy and also RAW K copy -> gemm 1 (gemm 1's WAR with the next K
    // copy is behind gemm 2's barrier).
    {"tests/kernels/barrier_free/flash_attention_shared.tile", "flash_attention_shared", 2, 0},
};

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in.good(), "cannot read " << relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The sizes of the file's first `# conformance:` line (small, so the CPU runs stay quick).
std::map<std::string, int64_t> conformance_sizes(const std::string& source) {
  std::map<std::string, int64_t> sizes;
  size_t at = source.find("# conformance:");
  if (at == std::string::npos) return sizes;
  std::string line = source.substr(at + 14, source.find('\n', at) - at - 14);
  std::stringstream items(line);
  std::string item;
  while (std::getline(items, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string name = item.substr(0, eq);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    sizes[name] = std::stoll(item.substr(eq + 1));
  }
  return sizes;
}

// Runs `kernel` (float64 precision, one host thread: deterministic) on seeded random inputs and
// returns the contents of every tensor afterwards.
std::vector<std::vector<double>> run_on_cpu(const Kernel& kernel,
                                            const std::map<std::string, int64_t>& sizes) {
  std::vector<int64_t> values(kernel.num_params, 0);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    const Symbol& s = kernel.symbol(p);
    if (s.kind != SymbolKind::kScalarParam) continue;
    auto it = sizes.find(s.name);
    values[p] = it != sizes.end() ? it->second : const_int_value(*s.default_value).value_or(0);
  }
  auto shape = eval_launch_shape(kernel, values);
  REQUIRE_MESSAGE(shape.ok(), shape.status().ToString());
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> tensors(kernel.num_params);
  std::vector<cpu::ArgValue> args;
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    if (kernel.symbol(p).kind != SymbolKind::kTensorParam) {
      args.emplace_back(values[p]);
      continue;
    }
    int64_t n = 1;
    for (int64_t d : shape->tensor_shapes[p]) n *= d;
    tensors[p].resize(static_cast<size_t>(n));
    for (double& v : tensors[p]) v = dist(rng);
    args.emplace_back(cpu::TensorArg{tensors[p].data(), tensors[p].size() * sizeof(double),
                                     DType::kF64});
  }
  cpu::RunOptions options;
  options.precision = cpu::Precision::kFloat64;
  options.num_threads = 1;
  absl::Status status = cpu::run_kernel(kernel, args, options);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  return tensors;
}

TEST_CASE("each kernel gets its hand-checked minimum, verifies, is stable and computes the same") {
  for (const Expected& e : kExpected) {
    std::string name = e.kernel;
    CAPTURE(name);
    std::string source = read_source(e.file);
    Module module = testing::parse_or_fail(source, e.file);
    const Kernel* found = module.find_kernel(e.kernel);
    REQUIRE(found);
    Kernel original = *found;
    Kernel kernel = original;
    int hand = testing::count_barriers(original);

    auto report = insert_barriers(kernel);
    REQUIRE_MESSAGE(report.ok(), report.status().ToString());
    CHECK(report->kernel == e.kernel);
    CHECK(report->inserted == e.inserted);
    CHECK(report->removed == e.removed);
    CHECK(testing::count_barriers(kernel) == hand + e.inserted - e.removed);

    Module transformed;
    transformed.kernels.push_back(kernel);
    absl::Status valid = verify_module_status(transformed);
    CHECK_MESSAGE(valid.ok(), valid.ToString());

    Kernel again = kernel;
    auto second = insert_barriers(again);
    REQUIRE(second.ok());
    CHECK(second->inserted == 0);
    CHECK(second->removed == 0);
    CHECK(again == kernel);

    auto sizes = conformance_sizes(source);
    CHECK(run_on_cpu(kernel, sizes) == run_on_cpu(original, sizes));
  }
}

TEST_CASE("the barrier-free variants are clean for the verifier before the pass as well") {
  for (const char* file : {"tests/kernels/barrier_free/gemm_double_buffer.tile",
                           "tests/kernels/barrier_free/softmax_shared.tile",
                           "tests/kernels/barrier_free/flash_attention_shared.tile"}) {
    CAPTURE(file);
    std::string source = read_source(file);
    Module module = testing::parse_or_fail(source, file);
    CHECK(source.find("# conformance:") != std::string::npos);
    CHECK(testing::count_barriers(module.kernels.at(0)) == 0);
    absl::Status valid = verify_module_status(module);
    CHECK_MESSAGE(valid.ok(), valid.ToString());
  }
}

}  // namespace
}  // namespace tilert
