// Collective tile operations: executed once per group of threads.
#pragma once

#include "absl/status/status.h"
#include "backends/cpu/executor.h"

namespace tilert::cpu {

absl::Status exec_copy(TaskExecutor& ex, const CopyOp& op, const ActiveThreads& threads);
absl::Status exec_copy_async(TaskExecutor& ex, const CopyAsyncOp& op, const ActiveThreads& threads);
absl::Status exec_gemm(TaskExecutor& ex, const GemmOp& op, const ActiveThreads& threads);
absl::Status exec_fill(TaskExecutor& ex, const FillOp& op, const ActiveThreads& threads);
absl::Status exec_reduce(TaskExecutor& ex, const ReduceOp& op, const ActiveThreads& threads);

}  // namespace tilert::cpu
