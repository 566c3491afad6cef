// The hip backend row: AMD GPUs through HIP and comgr. Its lowerer and driver bindings are not
// part of this build, so the row only reports why no hip device can be used; no driver
// library is loaded.
#include "absl/status/status.h"
#include "runtime/backend.h"

namespace tilert::runtime {

namespace {
absl::StatusOr<std::vector<DeviceRecord>> enumerate_hip_devices() {
  return absl::UnavailableError("no hip backend in this build yet");
}
}  // namespace

extern const Backend kHipBackend;
const Backend kHipBackend = {
    .name = "hip",
    .kind = TILERT_DEVICE_HIP,
    .enumerate = enumerate_hip_devices,
};

}  // namespace tilert::runtime
