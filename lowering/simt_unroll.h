// Full unrolling of SIMT loops marked `unroll` (constant bounds): the body is repeated with the
// loop variable replaced by each value. Fragments live in private arrays indexed by slot; once
// the slot loops are unrolled every such index is a constant, which lets every consumer keep the
// array in registers (a dynamically indexed private array becomes local memory on GPUs and a
// compare-and-select ladder per access in CPU implementations of Vulkan).
#pragma once

#include "lowering/simt.h"

namespace tilert::lowering {

void unroll_marked_loops(simt::Function& function);

}  // namespace tilert::lowering
