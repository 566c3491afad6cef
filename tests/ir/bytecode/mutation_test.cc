// Every truncation and every single-byte mutation of a valid module must be read without crashing:
// either rejected with an offset-carrying error or accepted as a module that writes back
// consistently. Checksums are recomputed after mutating so the deeper validation is exercised.
#include <doctest/doctest.h>

#include "ir/bytecode/bytecode.h"
#include "tests/ir/bytecode/sample_module.h"

namespace tilert {
namespace {

using Bytes = std::vector<uint8_t>;

TEST_CASE("bytecode: every prefix of the sample module is rejected") {
  Bytes bytes = write_bytecode(testing::sample_module());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto m = read_bytecode(std::span<const uint8_t>(bytes).first(n));
    REQUIRE_MESSAGE(!m.ok(), "prefix of " << n << " bytes was accepted");
    CHECK(m.status().message().substr(0, 3) == "@0x");
  }
}

TEST_CASE("bytecode: single-byte mutations never crash") {
  Bytes original = write_bytecode(testing::sample_module());
  size_t checksum_start = original.size() - 6;
  int accepted = 0, rejected = 0;
  for (size_t i = 0; i < original.size(); ++i) {
    for (uint8_t flip : {0x01, 0x02, 0x04, 0x10, 0x40, 0x80, 0xff}) {
      Bytes bytes = original;
      bytes[i] ^= flip;
      if (i < checksum_start) testing::fix_checksum(bytes);
      auto m = read_bytecode(bytes);
      if (!m.ok()) {
        ++rejected;
        CHECK(m.status().message().substr(0, 3) == "@0x");
        continue;
      }
      ++accepted;
      // Whatever was accepted writes and reads back to the same module.
      Bytes again = write_bytecode(*m);
      auto back = read_bytecode(again);
      REQUIRE_MESSAGE(back.ok(), back.status().ToString());
      CHECK(*back == *m);
      CHECK(write_bytecode(*back) == again);
    }
  }
  MESSAGE("mutations: " << accepted << " accepted, " << rejected << " rejected");
  CHECK(rejected > 0);
  CHECK(accepted > 0);
}

TEST_CASE("bytecode: an unfixed mutation is caught by the checksum") {
  Bytes bytes = write_bytecode(testing::sample_module());
  bytes[bytes.size() / 2] ^= 0x01;
  auto m = read_bytecode(bytes);
  REQUIRE(!m.ok());
}

}  // namespace
}  // namespace tilert
