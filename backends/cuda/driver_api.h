// The CUDA driver API dispatch table (internal to backends/cuda: the only header that includes
// cuda.h). Every call goes through these pointers; nothing links against libcuda.
#pragma once

#include <cuda.h>

#include <string_view>

#include "absl/status/status.h"
#include "backends/cuda/driver.h"

namespace tilert::cuda {

struct DriverApi {
#define TILERT_CU(name, need) decltype(&::name) name = nullptr;
#include "backends/cuda/cuda_symbols.def"
#undef TILERT_CU
};

// The table of a loaded driver.
const DriverApi& api(const Driver& driver);

// OK for CUDA_SUCCESS; otherwise "WHAT: CUDA_ERROR_X (the driver's description)" with the code
// the runtime reports: ResourceExhausted for out-of-memory and too many resources,
// DeadlineExceeded for the driver's own launch timeout, FailedPrecondition for faults while a
// kernel ran (illegal address, trap, ...), Unavailable for a missing or mismatched driver,
// InvalidArgument for invalid values, Internal otherwise.
absl::Status check(const Driver& driver, CUresult result, std::string_view what);

}  // namespace tilert::cuda

#define CU_RETURN_IF_ERROR(driver, call, what) \
  RETURN_IF_ERROR(::tilert::cuda::check((driver), (call), (what)))
