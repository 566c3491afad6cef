// The version of the code tilert generates for a module on CUDA devices: what the lowering
// (tile IR -> SIMT IR), the PTX emitter and the driver's compile options make of the same
// bytecode. Binaries in the compiled-module cache (module_cache.h) are keyed by it, so a binary
// made by older code is never loaded next to the launch metadata of newer code (a parameter added
// or reordered would be passed to the wrong slot).
#pragma once

#include <string_view>

namespace tilert::cuda {

// Bump when the generated code changes for a reason the sources of ir/, lowering/ and
// backends/cuda/ do not show (the fingerprint below covers every edit of those), e.g. a change
// in how a third-party tool or flag the build uses behaves.
inline constexpr int kGeneratedCodeVersion = 1;

// "<kGeneratedCodeVersion>+<fingerprint>": the fingerprint is a hash of the sources of ir/,
// lowering/ and backends/cuda/ taken when this library was built (code_fingerprint.py).
//
// The cache key holds the module's bytecode, which has no source locations: the generated code
// must not depend on them (today they reach only error messages and the SIMT function's
// metadata, which a cache hit still recomputes).
std::string_view generated_code_version();

}  // namespace tilert::cuda
