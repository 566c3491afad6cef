// LEB128 integers as the .tbc format uses them: minimal encodings only, bounded widths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilert::bytecode {

void append_u32(std::vector<uint8_t>& out, uint32_t v);
void append_i64(std::vector<uint8_t>& out, int64_t v);  // also used for i32 values

enum class LebError : uint8_t {
  kOk,
  kTruncated,   // the input ended inside the value
  kTooLong,     // the last permitted byte still has its continuation bit set
  kOverlong,    // a shorter encoding of the same value exists
  kOverflow,    // the value does not fit the width
};
const char* leb_error_text(LebError e);

// Decode one value starting at `p` (never reading at or past `end`); on success `*size` is the
// number of bytes taken.
LebError decode_u32(const uint8_t* p, const uint8_t* end, uint32_t* value, size_t* size);
LebError decode_i32(const uint8_t* p, const uint8_t* end, int32_t* value, size_t* size);
LebError decode_i64(const uint8_t* p, const uint8_t* end, int64_t* value, size_t* size);

}  // namespace tilert::bytecode
