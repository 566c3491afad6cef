#include "ir/bytecode/cursor.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_format.h"
#include "ir/bytecode/leb128.h"
#include "ir/status.h"

namespace tilert::bytecode {

absl::Status Cursor::error_at(size_t offset, std::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrFormat("@0x%08x: %s", static_cast<uint64_t>(offset), av(message)));
}

absl::Status Cursor::past_end(std::string_view what) const {
  return error(absl::StrFormat("expected %s: ran past the end of %s", av(what), limit_name_));
}

absl::Status Cursor::need(std::string_view what, size_t n) const {
  if (remaining() < n) return past_end(what);
  return absl::OkStatus();
}

absl::Status Cursor::u8(std::string_view what, uint8_t* out) {
  RETURN_IF_ERROR(need(what, 1));
  *out = bytes_[pos_++];
  return absl::OkStatus();
}

absl::Status Cursor::flag(std::string_view what, bool* out) {
  uint8_t v;
  size_t at = pos_;
  RETURN_IF_ERROR(u8(what, &v));
  if (v > 1) return error_at(at, absl::StrFormat("expected %s (0 or 1): found 0x%02x", av(what), v));
  *out = v == 1;
  return absl::OkStatus();
}

absl::Status Cursor::u16_le(std::string_view what, uint16_t* out) {
  RETURN_IF_ERROR(need(what, 2));
  *out = static_cast<uint16_t>(bytes_[pos_] | (bytes_[pos_ + 1] << 8));
  pos_ += 2;
  return absl::OkStatus();
}

absl::Status Cursor::u32_le(std::string_view what, uint32_t* out) {
  RETURN_IF_ERROR(need(what, 4));
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes_[pos_ + i]) << (8 * i);
  pos_ += 4;
  *out = v;
  return absl::OkStatus();
}

absl::Status Cursor::f64(std::string_view what, double* out) {
  RETURN_IF_ERROR(need(what, 8));
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(bytes_[pos_ + i]) << (8 * i);
  pos_ += 8;
  *out = std::bit_cast<double>(bits);
  return absl::OkStatus();
}

template <typename T>
absl::Status Cursor::leb(std::string_view kind, std::string_view what,
                         LebError (*decode)(const uint8_t*, const uint8_t*, T*, size_t*), T* out) {
  size_t size = 0;
  const uint8_t* base = bytes_.data();
  LebError e = decode(base + pos_, base + limit_, out, &size);
  if (e == LebError::kTruncated) return past_end(absl::StrFormat("%s (%s)", av(kind), av(what)));
  if (e != LebError::kOk)
    return error(absl::StrFormat("expected %s (%s): %s", av(kind), av(what), leb_error_text(e)));
  pos_ += size;
  return absl::OkStatus();
}

absl::Status Cursor::u32(std::string_view what, uint32_t* out) {
  return leb("u32 LEB128", what, decode_u32, out);
}
absl::Status Cursor::i32(std::string_view what, int32_t* out) {
  return leb("i32 LEB128", what, decode_i32, out);
}
absl::Status Cursor::i64(std::string_view what, int64_t* out) {
  return leb("i64 LEB128", what, decode_i64, out);
}

absl::Status Cursor::raw(std::string_view what, size_t n, std::span<const uint8_t>* out) {
  RETURN_IF_ERROR(need(what, n));
  *out = bytes_.subspan(pos_, n);
  pos_ += n;
  return absl::OkStatus();
}

absl::Status Cursor::count(std::string_view what, size_t min_item_bytes, uint32_t* out) {
  size_t at = pos_;
  RETURN_IF_ERROR(u32(what, out));
  if (static_cast<uint64_t>(*out) * min_item_bytes > remaining())
    return error_at(at, absl::StrFormat("expected %s that fits %s: %u items need at least %u bytes, "
                                        "%u are left",
                                        av(what), limit_name_, *out,
                                        static_cast<uint64_t>(*out) * min_item_bytes,
                                        static_cast<uint64_t>(remaining())));
  return absl::OkStatus();
}

}  // namespace tilert::bytecode
