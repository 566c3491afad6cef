#include "ir/bytecode/leb128.h"

#include <limits>

namespace tilert::bytecode {

void append_u32(std::vector<uint8_t>& out, uint32_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out.push_back(byte);
  } while (v != 0);
}

void append_i64(std::vector<uint8_t>& out, int64_t v) {
  while (true) {
    uint8_t byte = static_cast<uint8_t>(v & 0x7f);
    v >>= 7;  // arithmetic shift: keeps the sign
    bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
    if (!done) byte |= 0x80;
    out.push_back(byte);
    if (done) return;
  }
}

const char* leb_error_text(LebError e) {
  switch (e) {
    case LebError::kOk: return "ok";
    case LebError::kTruncated: return "ran past the end of the input";
    case LebError::kTooLong: return "too many bytes";
    case LebError::kOverlong: return "overlong encoding";
    case LebError::kOverflow: return "value out of range";
  }
  return "?";
}

namespace {

// Reads the groups of one LEB128 value: up to `max_bytes` bytes, the last without continuation bit.
// `*last` and `*before_last` are the final byte and the one before it (0 when there is none).
LebError read_groups(const uint8_t* p, const uint8_t* end, int max_bytes, uint64_t* bits,
                     size_t* size, uint8_t* last, uint8_t* before_last) {
  uint64_t result = 0;
  uint8_t prev = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (p + i >= end) return LebError::kTruncated;
    uint8_t byte = p[i];
    int shift = 7 * i;
    if (shift < 64) result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *bits = result;
      *size = static_cast<size_t>(i) + 1;
      *last = byte;
      *before_last = prev;
      return LebError::kOk;
    }
    prev = byte;
  }
  return LebError::kTooLong;
}

// Signed decode shared by i32 and i64: sign-extends, then checks minimality and range.
LebError decode_signed(const uint8_t* p, const uint8_t* end, int max_bytes, int64_t min,
                       int64_t max, int64_t* value, size_t* size) {
  uint64_t bits;
  uint8_t last, before_last;
  LebError e = read_groups(p, end, max_bytes, &bits, size, &last, &before_last);
  if (e != LebError::kOk) return e;
  int used_bits = static_cast<int>(*size) * 7;
  if (used_bits < 64 && (last & 0x40)) bits |= ~uint64_t{0} << used_bits;
  if (used_bits > 64) {
    // The final group of a 10-byte i64 holds bit 63 and sign copies only: all equal.
    uint8_t payload = last & 0x7f;
    if (payload != 0 && payload != 0x7f) return LebError::kOverflow;
  }
  // A final 0x00 (or 0x7f) group only repeats the sign bit of the group before it.
  if (*size > 1 && ((last == 0x00 && !(before_last & 0x40)) || (last == 0x7f && (before_last & 0x40))))
    return LebError::kOverlong;
  auto v = static_cast<int64_t>(bits);
  if (v < min || v > max) return LebError::kOverflow;
  *value = v;
  return LebError::kOk;
}

}  // namespace

LebError decode_u32(const uint8_t* p, const uint8_t* end, uint32_t* value, size_t* size) {
  uint64_t bits;
  uint8_t last, before_last;
  LebError e = read_groups(p, end, 5, &bits, size, &last, &before_last);
  if (e != LebError::kOk) return e;
  if (*size > 1 && last == 0) return LebError::kOverlong;
  if (bits > std::numeric_limits<uint32_t>::max()) return LebError::kOverflow;
  *value = static_cast<uint32_t>(bits);
  return LebError::kOk;
}

LebError decode_i32(const uint8_t* p, const uint8_t* end, int32_t* value, size_t* size) {
  int64_t v;
  LebError e = decode_signed(p, end, 5, std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int32_t>::max(), &v, size);
  if (e == LebError::kOk) *value = static_cast<int32_t>(v);
  return e;
}

LebError decode_i64(const uint8_t* p, const uint8_t* end, int64_t* value, size_t* size) {
  return decode_signed(p, end, 10, std::numeric_limits<int64_t>::min(),
                       std::numeric_limits<int64_t>::max(), value, size);
}

}  // namespace tilert::bytecode
