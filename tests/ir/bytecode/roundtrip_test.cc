// read(write(m)) == m for modules built from the IR structs, and the writer's determinism.
#include <doctest/doctest.h>

#include "ir/bytecode/bytecode.h"
#include "tests/ir/bytecode/sample_module.h"

namespace tilert {
namespace {

TEST_CASE("bytecode: the sample module round-trips exactly") {
  Module m = testing::sample_module();
  std::vector<uint8_t> bytes = write_bytecode(m);
  auto back = read_bytecode(bytes);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(*back == m);
  CHECK(write_bytecode(*back) == bytes);
  CHECK(looks_like_bytecode(bytes));
  MESSAGE("sample module: " << bytes.size() << " bytes");
  CHECK(bytes.size() < 1024);
}

TEST_CASE("bytecode: the tiny module has the documented layout") {
  std::vector<uint8_t> bytes = write_bytecode(testing::tiny_module());
  std::vector<uint8_t> expected_prefix = {
      'T', 'B', 'C', 0x01, 0x01, 0x00,  // magic, version 1
      0x01, 0x03, 0x01, 0x01, 'k',      // strings: 1 string "k"
      0x02, 0x0d,                       // kernels section, 13 bytes
      0x01,                             // 1 kernel
      0x00, 0x00, 0x00,                 // name "k", 0 symbols, 0 parameters
      0x01, 0x00, 0x03, 0x01,           // grid: 1 expr, int const i32 1
      0x20, 0x00, 0x00,                 // threads 32, no cluster, no capabilities
      0x01, 0x0c,                       // body: 1 statement, barrier
      0x7f, 0x04,                       // checksum section
  };
  REQUIRE(bytes.size() == 32);
  CHECK(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 28) == expected_prefix);
  auto back = read_bytecode(bytes);
  REQUIRE(back.ok());
  CHECK(*back == testing::tiny_module());
}

TEST_CASE("bytecode: strings are deduplicated in first-use order") {
  Module m = testing::sample_module();
  m.kernels.push_back(m.kernels[0]);
  std::vector<uint8_t> one = write_bytecode(testing::sample_module());
  std::vector<uint8_t> two = write_bytecode(m);
  // The second copy of the kernel adds no string: only its kernel payload.
  auto back = read_bytecode(two);
  REQUIRE(back.ok());
  CHECK(*back == m);
  CHECK(one[6] == 0x01);
  CHECK(two[7] == one[7]);  // same strings section size
}

TEST_CASE("bytecode: an empty module is 18 bytes") {
  std::vector<uint8_t> bytes = write_bytecode(Module{});
  CHECK(bytes.size() == 18);
  auto back = read_bytecode(bytes);
  REQUIRE(back.ok());
  CHECK(back->kernels.empty());
}

TEST_CASE("bytecode: source locations are not stored") {
  Module m = testing::tiny_module();
  m.kernels[0].body[0].loc = SourceLoc{12, 3};
  m.kernels[0].loc = SourceLoc{1, 1};
  CHECK(write_bytecode(m) == write_bytecode(testing::tiny_module()));
}

TEST_CASE("bytecode: looks_like_bytecode tells .tbc from text") {
  std::string text = "kernel k() grid(1) threads(1) {}";
  CHECK_FALSE(looks_like_bytecode(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
  CHECK_FALSE(looks_like_bytecode({}));
}

}  // namespace
}  // namespace tilert
