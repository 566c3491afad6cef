// The PTX emitter: SIMT IR (lowering/simt.h) to PTX text for one NVIDIA target (ptx:sm_80,
// ptx:sm_90, ptx:sm_90a). The text is what the CUDA driver JIT-compiles at module load; see
// README.md for how each SIMT construct maps onto PTX and for the kernel parameter convention.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::cuda {

// Shared memory beyond what a kernel may declare statically (48 KiB). A function whose shared
// arrays need more takes all of them from one dynamic `.extern .shared` array, and its launch
// passes Function::shared_bytes() as dynamic shared memory (after raising the function's
// MAX_DYNAMIC_SHARED_SIZE_BYTES attribute).
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
inline bool uses_dynamic_shared(const simt::Function& f) {
  return f.shared_bytes() > kMaxStaticSharedBytes;
}

// The entry parameter holding tensor map `map` of `f` (simt::Function::tensor_maps): 128 bytes,
// 64-byte aligned, after the SIMT parameters, in order.
std::string tensor_map_param_name(const simt::Function& f, size_t map);

// One complete PTX module holding the entry `f.name`. Errors: InvalidArgument for a target that
// is not PTX or malformed IR (naming the function and what is wrong); Unimplemented naming the
// function and construct for what PTX cannot express here (f64 transcendentals, for example).
absl::StatusOr<std::string> emit_ptx(const simt::Function& f,
                                     const lowering::TargetDescription& target);

// One PTX module holding an entry for each function, in order (names must differ).
absl::StatusOr<std::string> emit_ptx_module(std::span<const simt::Function> functions,
                                            const lowering::TargetDescription& target);

}  // namespace tilert::cuda
