#include <doctest/doctest.h>

#include <limits>

#include "ir/bytecode/leb128.h"

namespace tilert::bytecode {
namespace {

std::vector<uint8_t> u32_bytes(uint32_t v) {
  std::vector<uint8_t> out;
  append_u32(out, v);
  return out;
}
std::vector<uint8_t> i64_bytes(int64_t v) {
  std::vector<uint8_t> out;
  append_i64(out, v);
  return out;
}

LebError u32_of(const std::vector<uint8_t>& b, uint32_t* v, size_t* size) {
  return decode_u32(b.data(), b.data() + b.size(), v, size);
}
LebError i32_of(const std::vector<uint8_t>& b, int32_t* v, size_t* size) {
  return decode_i32(b.data(), b.data() + b.size(), v, size);
}
LebError i64_of(const std::vector<uint8_t>& b, int64_t* v, size_t* size) {
  return decode_i64(b.data(), b.data() + b.size(), v, size);
}

TEST_CASE("leb128: unsigned encodings are minimal and round-trip") {
  CHECK(u32_bytes(0) == std::vector<uint8_t>{0x00});
  CHECK(u32_bytes(127) == std::vector<uint8_t>{0x7f});
  CHECK(u32_bytes(128) == std::vector<uint8_t>{0x80, 0x01});
  CHECK(u32_bytes(0xffffffffu) == std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 0x0f});
  for (uint32_t v : {0u, 1u, 127u, 128u, 300u, 16384u, 0x7fffffffu, 0xffffffffu}) {
    uint32_t got = 0;
    size_t size = 0;
    auto bytes = u32_bytes(v);
    REQUIRE(u32_of(bytes, &got, &size) == LebError::kOk);
    CHECK(got == v);
    CHECK(size == bytes.size());
  }
}

TEST_CASE("leb128: signed encodings are minimal and round-trip") {
  CHECK(i64_bytes(0) == std::vector<uint8_t>{0x00});
  CHECK(i64_bytes(63) == std::vector<uint8_t>{0x3f});
  CHECK(i64_bytes(64) == std::vector<uint8_t>{0xc0, 0x00});
  CHECK(i64_bytes(-1) == std::vector<uint8_t>{0x7f});
  CHECK(i64_bytes(-64) == std::vector<uint8_t>{0x40});
  CHECK(i64_bytes(-65) == std::vector<uint8_t>{0xbf, 0x7f});
  CHECK(i64_bytes(std::numeric_limits<int64_t>::min()).size() == 10);
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{64}, int64_t{-65}, int64_t{1} << 40,
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    int64_t got = 0;
    size_t size = 0;
    auto bytes = i64_bytes(v);
    REQUIRE(i64_of(bytes, &got, &size) == LebError::kOk);
    CHECK(got == v);
    CHECK(size == bytes.size());
  }
  int32_t got32 = 0;
  size_t size = 0;
  REQUIRE(i32_of(i64_bytes(std::numeric_limits<int32_t>::min()), &got32, &size) == LebError::kOk);
  CHECK(got32 == std::numeric_limits<int32_t>::min());
}

TEST_CASE("leb128: malformed encodings are named") {
  uint32_t u = 0;
  int32_t i = 0;
  int64_t l = 0;
  size_t size = 0;
  CHECK(u32_of({0x80}, &u, &size) == LebError::kTruncated);
  CHECK(u32_of({}, &u, &size) == LebError::kTruncated);
  CHECK(u32_of({0x80, 0x00}, &u, &size) == LebError::kOverlong);
  CHECK(u32_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, &u, &size) == LebError::kTooLong);
  CHECK(u32_of({0xff, 0xff, 0xff, 0xff, 0x1f}, &u, &size) == LebError::kOverflow);
  CHECK(i32_of({0xff, 0x7f}, &i, &size) == LebError::kOverlong);  // -1 in two bytes
  CHECK(i32_of({0x80, 0x00}, &i, &size) == LebError::kOverlong);  // 0 in two bytes
  CHECK(i32_of({0x80, 0x80, 0x80, 0x80, 0x08}, &i, &size) == LebError::kOverflow);  // 2^31
  CHECK(i64_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, &l, &size) ==
        LebError::kOverflow);  // the tenth group must be all sign
  CHECK(i64_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, &l, &size) ==
        LebError::kTooLong);
}

}  // namespace
}  // namespace tilert::bytecode
