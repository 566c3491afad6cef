// The cuda backend row: NVIDIA GPUs through the CUDA driver API. Its lowerer and driver
// bindings are not part of this build, so the row only reports why no cuda device can be used;
// no driver library is loaded.
#include "absl/status/status.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {
absl::StatusOr<std::vector<DeviceRecord>> enumerate_cuda_devices() {
  return absl::UnavailableError("no cuda backend in this build yet");
}
}  // namespace

extern const Backend kCudaBackend;
const Backend kCudaBackend = {
    .name = "cuda",
    .kind = TILERT_DEVICE_CUDA,
    .enumerate = enumerate_cuda_devices,
};

}  // namespace tilert::runtime
