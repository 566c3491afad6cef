#include "frontends/cli/api_handles.h"

#include <string>

namespace tilert::cli {

absl::Status api_status(tilert_status status, std::string_view what) {
  if (status == TILERT_OK) return absl::OkStatus();
  std::string message = std::string(what) + ": " + tilert_last_error() + " (" +
                        tilert_status_name(status) + ")";
  switch (status) {
    case TILERT_ERROR_INVALID_ARGUMENT: return absl::InvalidArgumentError(message);
    case TILERT_ERROR_NOT_FOUND: return absl::NotFoundError(message);
    case TILERT_ERROR_UNAVAILABLE: return absl::UnavailableError(message);
    case TILERT_ERROR_DEADLOCK: return absl::AbortedError(message);
    case TILERT_ERROR_TIMEOUT: return absl::DeadlineExceededError(message);
    case TILERT_ERROR_OUT_OF_MEMORY: return absl::ResourceExhaustedError(message);
    case TILERT_ERROR_UNIMPLEMENTED: return absl::UnimplementedError(message);
    default: return absl::InternalError(message);
  }
}

std::string_view device_kind_name(tilert_device_kind kind) {
  switch (kind) {
    case TILERT_DEVICE_CPU: return "cpu";
    case TILERT_DEVICE_CUDA: return "cuda";
    case TILERT_DEVICE_HIP: return "hip";
    case TILERT_DEVICE_VULKAN: return "vulkan";
  }
  return "unknown";
}

}  // namespace tilert::cli
