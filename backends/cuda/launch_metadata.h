// What a launch needs to know about a lowered kernel besides its code: the entry name, threads,
// parameters (and which is the status record), shared memory and the sync sites a status record
// names. Stored next to the cubin in the compiled-module cache, so that a warm load runs neither
// the lowering nor the JIT.
//
// A cache entry's bytes: u64 (little-endian) length of the metadata JSON, the JSON, the cubin.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/simt.h"

namespace tilert::cuda {

// `functions` reduced to their launch metadata (bodies, variables and matrices are dropped),
// followed by `cubin`.
std::string pack_cache_entry(std::span<const simt::Function> functions, std::string_view cubin);

struct UnpackedEntry {
  std::vector<simt::Function> functions;  // launch metadata only: empty bodies
  std::string cubin;
};
// DataLoss for bytes that are not a well-formed entry (a stale format, damage).
absl::StatusOr<UnpackedEntry> unpack_cache_entry(std::string_view bytes);

}  // namespace tilert::cuda
