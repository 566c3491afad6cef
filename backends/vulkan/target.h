// The lowering's target description and the emitter's options for one Vulkan device: the
// predefined vulkan1.2 / vulkan1.3 description (guaranteed minimums) overwritten with what the
// device reports.
#pragma once

#include "backends/vulkan/device.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "lowering/target.h"

namespace tilert::vulkan {

lowering::TargetDescription target_for_device(const PhysicalDeviceInfo& info);
SpirvOptions spirv_options_for_device(const PhysicalDeviceInfo& info);

}  // namespace tilert::vulkan
