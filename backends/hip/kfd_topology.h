// The GPU architecture of each AMD GPU, read from the kernel driver's topology in sysfs (what the
// ROCm runtime itself reads). HIP reports the architecture only inside hipDeviceProp_t, whose
// layout differs between ROCm 5 and 6; sysfs is the same everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tilert::hip {

inline constexpr const char* kKfdTopologyNodes = "/sys/class/kfd/kfd/topology/nodes";

// "gfx90a" for gfx_target_version 90010 (major * 10000 + minor * 100 + stepping; the minor and
// stepping are printed as one hex digit each). "" for 0 (a CPU node).
std::string arch_from_target_version(uint32_t version);

// The architectures of the GPU nodes under `nodes_dir`, in node order (the order the ROCm
// runtime lists its GPU agents). NotFound when the directory is missing.
absl::StatusOr<std::vector<std::string>> gpu_archs(const std::string& nodes_dir = kKfdTopologyNodes);

}  // namespace tilert::hip
