// tilert_launch: bind the arguments, hand the launch to the device's backend, and remember an
// execution error on the stream for the next sync.
#include <mutex>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "runtime/errors.h"
#include "runtime/launch_binding.h"
#include "runtime/objects.h"

namespace tilert::runtime {

namespace {

absl::Status launch(tilert_kernel kernel, tilert_stream stream, std::span<const tilert_arg> args) {
  const tilert_module_s& module = *kernel->module;
  const tilert_device_s& device = *module.device;
  const Kernel& ir_kernel = kernel->kernel();
  if (stream->device != module.device) {
    return absl::InvalidArgumentError(absl::StrCat("launch ", ir_kernel.name, ": the stream is on ",
                                                   wrong_device_text(*stream->device, device)));
  }
  ASSIGN_OR_RETURN(BoundLaunch bound, bind_launch_args(ir_kernel, device, args));
  LaunchRequest request;
  request.module = &module.module;
  request.prepared_module = module.prepared.get();
  request.kernel_index = kernel->index;
  request.args = bound.values;
  request.shape = &bound.shape;
  absl::Status executed = device.backend->launch(device.record, stream->state.get(), request);
  if (!executed.ok()) {
    std::lock_guard<std::mutex> lock(stream->mutex);
    if (stream->first_error.ok()) stream->first_error = executed;
  }
  return executed;
}

}  // namespace

}  // namespace tilert::runtime

extern "C" tilert_status tilert_launch(tilert_kernel kernel, tilert_stream stream,
                                       const tilert_arg* args, size_t num_args) {
  static constexpr const char* kFunction = "tilert_launch";
  using tilert::runtime::null_argument;
  return tilert::runtime::guarded(kFunction, [&]() -> absl::Status {
    if (kernel == nullptr) return null_argument(kFunction, "kernel");
    if (stream == nullptr) return null_argument(kFunction, "stream");
    if (args == nullptr && num_args != 0) return null_argument(kFunction, "args");
    return tilert::runtime::launch(kernel, stream, std::span<const tilert_arg>(args, num_args));
  });
}
