// The acceptance check over every .tile file in the tree: .tile -> parse -> write -> read -> print
// -> parse -> write gives identical bytes, and read(write(m)) == m.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/text/parser.h"
#include "frontends/text/printer.h"
#include "ir/bytecode/bytecode.h"
#include "tests/ir/bytecode/sample_module.h"

namespace tilert {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool expects_parse_error(const std::string& text) {
  std::string first_line = text.substr(0, text.find('\n'));
  return first_line.find("# expect-parse-error") != std::string::npos;
}

std::vector<fs::path> tile_files() {
  std::vector<fs::path> files;
  for (const char* dir : {"examples", "tests/kernels"}) {
    fs::path root = fs::path(TILERT_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root))
      if (entry.is_regular_file() && entry.path().extension() == ".tile") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("bytecode: every .tile file round-trips through bytecode and text") {
  int checked = 0;
  for (const fs::path& path : tile_files()) {
    std::string text = read_text(path);
    if (expects_parse_error(text)) continue;
    CAPTURE(path.string());
    auto parsed = parse_tile(text, path.string());
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    std::vector<uint8_t> bytes = write_bytecode(*parsed);
    auto read = read_bytecode(bytes);
    REQUIRE_MESSAGE(read.ok(), read.status().ToString());
    CHECK(*read == *parsed);
    std::string printed = print_tile(*read);
    auto reparsed = parse_tile(printed, path.string() + " (printed)");
    REQUIRE_MESSAGE(reparsed.ok(), reparsed.status().ToString() << "\n" << printed);
    CHECK(write_bytecode(*reparsed) == bytes);
    ++checked;
  }
  MESSAGE(".tile files round-tripped: " << checked);
  CHECK(checked > 0);
}

// Single-byte mutations of real kernels' bytecode (checksum recomputed): never a crash, and whatever
// is accepted writes back consistently.
TEST_CASE("bytecode: mutations of the examples' bytecode never crash") {
  int accepted = 0, rejected = 0;
  for (const fs::path& path : tile_files()) {
    if (path.parent_path().filename() != "examples") continue;
    auto parsed = parse_tile(read_text(path), path.string());
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    std::vector<uint8_t> original = write_bytecode(*parsed);
    for (size_t i = 0; i + 6 < original.size(); ++i) {
      for (uint8_t flip : {0x01, 0x08, 0x80, 0xff}) {
        std::vector<uint8_t> bytes = original;
        bytes[i] ^= flip;
        testing::fix_checksum(bytes);
        auto m = read_bytecode(bytes);
        if (!m.ok()) {
          ++rejected;
          continue;
        }
        ++accepted;
        auto back = read_bytecode(write_bytecode(*m));
        REQUIRE(back.ok());
        CHECK(*back == *m);
      }
    }
  }
  MESSAGE("example mutations: " << accepted << " accepted, " << rejected << " rejected");
  CHECK(rejected > 0);
}

TEST_CASE("bytecode: the gemm example is under 1 KB") {
  fs::path gemm = fs::path(TILERT_SOURCE_DIR) / "examples" / "gemm.tile";
  if (!fs::exists(gemm)) {
    MESSAGE("skipped: " << gemm.string() << " does not exist yet");
    return;
  }
  auto parsed = parse_tile(read_text(gemm), gemm.string());
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  size_t size = write_bytecode(*parsed).size();
  MESSAGE("examples/gemm.tile: " << size << " bytes of bytecode");
  CHECK(size < 1024);
}

}  // namespace
}  // namespace tilert
