// Constants of the .tbc format (ir/bytecode/README.md documents the layout byte by byte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/bytecode/bytecode.h"

namespace tilert::bytecode {

// Sections, in the order they must appear. X(enumerator, name in diagnostics, id byte).
// strings and kernels are required; target_blobs is optional; checksum is always last.
#define TILERT_BYTECODE_SECTIONS(X)           \
  X(kStrings, "strings", 0x01)                \
  X(kKernels, "kernels", 0x02)                \
  X(kTargetBlobs, "target blobs", 0x03)       \
  X(kChecksum, "checksum", 0x7f)

enum class SectionId : uint8_t {
#define TILERT_X(e, name, id) e = id,
  TILERT_BYTECODE_SECTIONS(TILERT_X)
#undef TILERT_X
};

// Name of a known section id, or nullptr.
const char* section_name(uint8_t id);

// Magic (4 bytes) + version (u16 little-endian).
inline constexpr size_t kHeaderSize = sizeof(kBytecodeMagic) + 2;
// The checksum section's payload: CRC-32 of every byte before the section's id, u32 little-endian.
inline constexpr size_t kChecksumSize = 4;

// Statements and expressions share one nesting budget, so hostile input cannot exhaust the stack
// of the recursive reader (or of the destructors of what it built).
inline constexpr int kMaxNestingDepth = 128;

// LEB128 widths: the most bytes a value of each width may take.
inline constexpr int kMaxU32Bytes = 5;
inline constexpr int kMaxI32Bytes = 5;
inline constexpr int kMaxI64Bytes = 10;

// Region dimension tags.
inline constexpr uint8_t kRangeSlice = 0;  // start expr, extent i64
inline constexpr uint8_t kRangeIndex = 1;  // start expr only (extent 1)

// GemmOp flag bits.
inline constexpr uint8_t kGemmTransposeA = 1;
inline constexpr uint8_t kGemmTransposeB = 2;

// The capability bits that TILERT_CAPABILITIES defines; any other bit is rejected.
inline constexpr uint32_t kKnownCapabilities = 0
#define TILERT_X(e, s, b) | (1u << (b))
    TILERT_CAPABILITIES(TILERT_X)
#undef TILERT_X
    ;

// The op code of each statement struct, from TILERT_OPS.
template <typename Op>
struct OpCode;
#define TILERT_X(type, name, code) \
  template <>                      \
  struct OpCode<type> {            \
    static constexpr uint8_t value = code; \
  };
TILERT_OPS(TILERT_X)
#undef TILERT_X

}  // namespace tilert::bytecode
