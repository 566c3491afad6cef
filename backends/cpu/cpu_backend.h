// The CPU reference backend: executes the tile IR with exact semantics (the semantics every other
// backend is tested against). See backends/cpu/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace tilert::cpu {

// A tensor argument: host memory holding `size_bytes` bytes of elements of type `storage`.
// In Precision::kExact `storage` is the parameter's dtype; in Precision::kFloat64 it is f64.
struct TensorArg {
  void* data = nullptr;
  size_t size_bytes = 0;
  DType storage = DType::kF32;
};
// One value per kernel parameter, in signature order: int64_t for integer/bool scalars, double for
// float scalars, TensorArg for tensors.
using ArgValue = std::variant<int64_t, double, TensorArg>;

enum class Precision {
  kExact,    // every store rounds to the destination's dtype; gemm accumulates in its C dtype
  kFloat64,  // no rounding anywhere: the float64 reference that kExact is checked against
};

struct RunOptions {
  Precision precision = Precision::kExact;
  int num_threads = 0;  // host threads for blocks; 0: std::thread::hardware_concurrency()
  // A cluster whose tasks make no progress for this long fails with DeadlineExceeded. Deadlocks
  // are reported at once (Aborted); this only guards the reference itself against hanging.
  int watchdog_ms = 10000;
  // Detect data races on shared memory (backends/cpu/race_check.h): the first race fails the run
  // with DataLoss ("race in kernel K block (0,0,0) on As[0, 0, 0]: write by copy_async at line 14
  // (role producer) and read by gemm at line 22 (role consumer) are not ordered by any barrier").
  // Results are the same as without; only the run is slower.
  bool check_races = false;
};

// Runs `kernel` over its whole grid. Errors: bad arguments (InvalidArgument), out-of-bounds
// accesses and broken IR (OutOfRange naming kernel, line and op), deadlocks (Aborted, reported
// as soon as every task of a block or cluster waits; the message names the kernel, the block, and
// each waiting role with its barrier: "deadlock in kernel K block (x,y,z): role producer (threads
// 0..127) waits on mbarrier empty[0] parity 0 at line 14 (phase 0: 0 of 128 arrivals, ...)").
absl::Status run_kernel(const Kernel& kernel, std::span<const ArgValue> args,
                        const RunOptions& options = {});

}  // namespace tilert::cpu
