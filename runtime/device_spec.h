// Device specs: "auto", "cpu", "cuda:1", ... as tilert_device_find and TILERT_DEVICE spell them.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/objects.h"

namespace tilert::runtime {

// The device `spec` names among the context's devices. Errors: InvalidArgument for a malformed
// spec or an unknown kind ("unknown device kind 'tpu' ..."), Unavailable for a backend without
// devices ("vulkan is unavailable: <reason>"), NotFound for a missing index
// ("cpu:3: no such device (1 cpu device)").
absl::StatusOr<tilert_device_s*> find_device(const ContextState& context, std::string_view spec);

}  // namespace tilert::runtime
