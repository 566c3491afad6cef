// Synchronization statements: block, named and cluster barriers; mbarrier arrive / expect_tx /
// wait. Waits go through the cluster's scheduler, which reports deadlocks.
#pragma once

#include "absl/status/status.h"
#include "backends/cpu/executor.h"

namespace tilert::cpu {

absl::Status exec_barrier(TaskExecutor& ex, const ActiveThreads& threads);
absl::Status exec_named_barrier(TaskExecutor& ex, const NamedBarrierOp& op, const ActiveThreads& threads);
absl::Status exec_cluster_sync(TaskExecutor& ex, const ActiveThreads& threads);
absl::Status exec_arrive(TaskExecutor& ex, const MbarrierArriveOp& op, const ActiveThreads& threads);
absl::Status exec_expect_tx(TaskExecutor& ex, const MbarrierExpectTxOp& op, const ActiveThreads& threads);
absl::Status exec_wait(TaskExecutor& ex, const MbarrierWaitOp& op, const ActiveThreads& threads);

// Resolves `full[k % 2]` for the group: the barrier, and "full[1]" for messages.
absl::Status resolve_mbarrier(TaskExecutor& ex, const MbarrierRef& ref, const ActiveThreads& threads,
                              Mbarrier** out, std::string* label);

}  // namespace tilert::cpu
