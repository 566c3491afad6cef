// A bounds-checked read position in .tbc bytes. Every read names what it reads, and every error is
// InvalidArgument "@0x%08x: <what was expected>: <what was found>" at the offending byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "ir/bytecode/leb128.h"

namespace tilert::bytecode {

class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes), limit_(bytes.size()) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return limit_ - pos_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  // Reads stop at the limit: the end of the input, or of the section being read.
  struct Limit {
    size_t end;
    std::string name;
  };
  Limit limit() const { return {limit_, limit_name_}; }
  void set_limit(Limit l) {
    limit_ = l.end;
    limit_name_ = std::move(l.name);
  }

  absl::Status error_at(size_t offset, std::string_view message) const;
  absl::Status error(std::string_view message) const { return error_at(pos_, message); }

  absl::Status u8(std::string_view what, uint8_t* out);
  absl::Status flag(std::string_view what, bool* out);  // a byte that must be 0 or 1
  absl::Status u16_le(std::string_view what, uint16_t* out);
  absl::Status u32_le(std::string_view what, uint32_t* out);
  absl::Status f64(std::string_view what, double* out);
  absl::Status u32(std::string_view what, uint32_t* out);  // LEB128
  absl::Status i32(std::string_view what, int32_t* out);   // signed LEB128
  absl::Status i64(std::string_view what, int64_t* out);   // signed LEB128
  absl::Status raw(std::string_view what, size_t n, std::span<const uint8_t>* out);

  // Reads a u32 count of items that each take at least `min_item_bytes`, and rejects a count the
  // bytes left cannot hold (so nothing is allocated for items that are not there).
  absl::Status count(std::string_view what, size_t min_item_bytes, uint32_t* out);

 private:
  absl::Status past_end(std::string_view what) const;
  absl::Status need(std::string_view what, size_t n) const;
  template <typename T>
  absl::Status leb(std::string_view kind, std::string_view what,
                   LebError (*decode)(const uint8_t*, const uint8_t*, T*, size_t*), T* out);

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  size_t limit_;
  std::string limit_name_ = "the input";
};

}  // namespace tilert::bytecode
