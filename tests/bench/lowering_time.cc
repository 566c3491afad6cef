// How long the runtime's own lowering takes: .tbc bytes -> tile IR (read and validate) -> SIMT IR
// -> PTX / SPIR-V, per kernel of a .tile file, median of N in-process repetitions. Prints a table.
// PTX is lowered for sm_90a as the CUDA runtime does by default (warpgroup plans). The "first PTX"
// column is each kernel's first lowering in the process, before anything else is timed (the
// first kernel's includes the process's one-time costs: heap growth, cold caches); the medians
// follow half a second of untimed lowering, so the CPU's clock has ramped up and the heap has
// grown, as in a process that lowers kernels routinely.
//
//   build/tests/bench/lowering_time examples/gemm.tile [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/ptx_emit.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"
#include "lowering/lower_kernel.h"

namespace {

using Clock = std::chrono::steady_clock;

double median_us(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Fn>
double time_us(int reps, Fn&& fn) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto start = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return median_us(std::move(t));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilert;
  if (argc < 2) {
    std::fprintf(stderr, "usage: lowering_time FILE.tile [repetitions]\n");
    return 2;
  }
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 50;
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Module> parsed = parse_tile(text.str(), argv[1]);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
    return 1;
  }
  const std::vector<uint8_t> tbc = write_bytecode(*parsed);
  const lowering::TargetDescription& sm90a = lowering::predefined_target(lowering::PredefinedTarget::kSm90a);
  const lowering::LowerOptions runtime_options{.warpgroup_mma = true, .tensor_copies = true};
  lowering::TargetDescription vk = lowering::predefined_target(lowering::PredefinedTarget::kVulkan13);
  vk.subgroup_sizes = {32};
  vk.shared_memory_per_block = 49152;
  vk.max_threads_per_block = 1024;
  vulkan::SpirvOptions spirv;
  spirv.spirv_version = 0x00010600;
  spirv.storage_16bit = spirv.float16_arithmetic = spirv.subgroup_arithmetic = true;

  auto total_ptx = [&](const Kernel& k) {
    absl::StatusOr<Module> m = read_bytecode(tbc);
    absl::StatusOr<simt::Function> g = lowering::lower_kernel(*m->find_kernel(k.name), sm90a, runtime_options);
    return g.ok() && cuda::emit_ptx(*g, sm90a).ok();
  };
  std::vector<double> first;
  for (const Kernel& k : parsed->kernels) first.push_back(time_us(1, [&] { total_ptx(k); }));
  for (auto start = Clock::now(); Clock::now() - start < std::chrono::milliseconds(500);)
    for (const Kernel& k : parsed->kernels) total_ptx(k);

  std::printf("%zu bytes of .tbc, median of %d repetitions, microseconds\n\n", tbc.size(), reps);
  std::printf("%-24s %10s %10s %10s %10s %10s %12s\n", "kernel", "first PTX", "read .tbc", "lower", "emit PTX",
              "total PTX", "SPIR-V total");
  for (size_t ki = 0; ki < parsed->kernels.size(); ++ki) {
    const Kernel& k = parsed->kernels[ki];
    bool ok = true;
    double read = time_us(reps, [&] { ok &= read_bytecode(tbc).ok(); });
    double lower = time_us(reps, [&] { ok &= lowering::lower_kernel(k, sm90a, runtime_options).ok(); });
    absl::StatusOr<simt::Function> f = lowering::lower_kernel(k, sm90a, runtime_options);
    if (!f.ok()) {
      std::printf("%-24s %s\n", k.name.c_str(), f.status().ToString().c_str());
      continue;
    }
    double emit = time_us(reps, [&] { ok &= cuda::emit_ptx(*f, sm90a).ok(); });
    double total = time_us(reps, [&] { ok &= total_ptx(k); });
    double spirv_total = time_us(reps, [&] {
      absl::StatusOr<Module> m = read_bytecode(tbc);
      absl::StatusOr<simt::Function> g = lowering::lower_kernel(*m->find_kernel(k.name), vk);
      ok &= g.ok() && vulkan::emit_spirv(*g, spirv).ok();
    });
    std::printf("%-24s %10.1f %10.1f %10.1f %10.1f %10.1f %12.1f%s\n", k.name.c_str(), first[ki], read, lower, emit,
                total, spirv_total, ok ? "" : "  (an error occurred)");
  }
  return 0;
}
