// Asynchronous global-to-shared copies (sm_80): cp.async.cg with 16-byte chunks, grouped with
// cp.async.commit_group and waited for with cp.async.wait_group. The copy bypasses registers, so
// a thread can issue the next pipeline stage's loads and compute on the current one meanwhile.
#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_function.h"
#include "ir/status.h"

namespace tilert::cuda {

using simt::Space;

absl::Status FunctionEmitter::async_copy(const simt::Stmt& s) {
  if (!target_.has(lowering::TargetFeature::kAsyncCopy))
    return unimplemented(absl::StrCat("async_copy: ", target_.arch, " has no cp.async"));
  if (s.a != 16) return unimplemented(absl::StrCat("async_copy of ", s.a, " bytes (only 16-byte chunks)"));
  if (s.id >= f_.shared.size()) return error(absl::StrCat("async_copy: no shared array #", s.id));
  if (s.array >= f_.params.size() || !f_.params[s.array].is_array)
    return error(absl::StrCat("async_copy: global array #", s.array, " is not an array parameter"));
  const DType type = f_.shared[s.id].type;
  if (f_.params[s.array].type != type)
    return error(absl::StrCat("async_copy: ", f_.params[s.array].name, " and ", f_.shared[s.id].name,
                              " have different element types"));
  ASSIGN_OR_RETURN(std::string dst, address(Space::kShared, s.id, s.operands[0], type));
  ASSIGN_OR_RETURN(std::string src, address(Space::kGlobal, s.array, s.operands[1], type));
  // .cg caches in L2 only: the data is read once per block from global memory.
  line("cp.async.cg.shared.global [", dst, "], [", src, "], 16");
  return absl::OkStatus();
}

absl::Status FunctionEmitter::async_commit() {
  if (!target_.has(lowering::TargetFeature::kAsyncCopy))
    return unimplemented(absl::StrCat("async_commit: ", target_.arch, " has no cp.async"));
  line("cp.async.commit_group");
  return absl::OkStatus();
}

absl::Status FunctionEmitter::async_wait(const simt::Stmt& s) {
  if (!target_.has(lowering::TargetFeature::kAsyncCopy))
    return unimplemented(absl::StrCat("async_wait: ", target_.arch, " has no cp.async"));
  if (s.a > 7) return error(absl::StrCat("async_wait ", s.a, ": at most 7 groups may stay in flight"));
  line("cp.async.wait_group ", s.a);
  return absl::OkStatus();
}

}  // namespace tilert::cuda
