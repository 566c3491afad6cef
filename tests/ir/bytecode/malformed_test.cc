// One test per class of malformed input: each asserts the exact message and byte offset.
#include <doctest/doctest.h>

#include "absl/strings/str_format.h"
#include "ir/bytecode/bytecode.h"
#include "ir/bytecode/checksum.h"
#include "tests/ir/bytecode/sample_module.h"

namespace tilert {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::assemble;
using testing::fix_checksum;

// The read error's message ("" when the bytes were accepted).
std::string read_error(const Bytes& bytes) {
  auto m = read_bytecode(bytes);
  if (m.ok()) return "";
  CHECK(m.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

Bytes tiny() { return write_bytecode(testing::tiny_module()); }

const Bytes kStringsK = {0x01, 0x01, 'k'};  // one string: "k"

// Kernel "k" with symbols n (scalar parameter) and i (loop variable); `grid` and `body` are spliced
// in. The grid's first byte lands at offset 0x1a.
Bytes two_symbol_kernel(const Bytes& grid, const Bytes& body) {
  Bytes payload = {0x01,              // one kernel
                   0x00, 0x02, 0x01,  // name "k", 2 symbols, 1 parameter
                   0x00, 0x00, 0x03,  // symbol "k" (name reused): scalar parameter, i32
                   0x00, 0x05, 0x03,  // symbol "k": loop variable, i32
                   0x00, 0x00,        // scalar: rank 0, no default
                   0x00};             // loop variable: rank 0
  payload.insert(payload.end(), grid.begin(), grid.end());
  payload.insert(payload.end(), {0x20, 0x00, 0x00});  // threads 32, no cluster, no capabilities
  payload.insert(payload.end(), body.begin(), body.end());
  return assemble({{0x01, kStringsK}, {0x02, payload}});
}

TEST_CASE("bytecode: every prefix of a valid module is rejected cleanly") {
  Bytes bytes = tiny();
  for (size_t n = 0; n < bytes.size(); ++n) {
    Bytes prefix(bytes.begin(), bytes.begin() + static_cast<long>(n));
    CHECK_MESSAGE(!read_error(prefix).empty(), "prefix of " << n << " bytes was accepted");
  }
  CHECK(read_error(Bytes(bytes.begin(), bytes.begin() + 2)) ==
        "@0x00000000: expected magic 'TBC\\x01': ran past the end of the input");
  CHECK(read_error(Bytes(bytes.begin(), bytes.begin() + 7)) ==
        "@0x00000007: expected u32 LEB128 (strings section size): ran past the end of the input");
  CHECK(read_error(Bytes(bytes.begin(), bytes.begin() + 26)) ==
        "@0x0000001a: expected section id: ran past the end of the input");
  CHECK(read_error(Bytes(bytes.begin(), bytes.begin() + 30)) ==
        "@0x0000001c: expected checksum: ran past the end of the input");
}

TEST_CASE("bytecode: bad LEB128 integers") {
  CHECK(read_error(assemble({{0x01, {0x80, 0x00}}, {0x02, {0x00}}})) ==
        "@0x00000008: expected u32 LEB128 (string count): overlong encoding");
  CHECK(read_error(assemble({{0x01, {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}}, {0x02, {0x00}}})) ==
        "@0x00000008: expected u32 LEB128 (string count): too many bytes");
  CHECK(read_error(assemble({{0x01, {0xff, 0xff, 0xff, 0xff, 0x1f}}, {0x02, {0x00}}})) ==
        "@0x00000008: expected u32 LEB128 (string count): value out of range");
  // An integer constant whose tenth group is not a sign extension.
  Bytes huge = {0x01, 0x00, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02};
  CHECK(read_error(two_symbol_kernel(huge, {0x00})) ==
        "@0x0000001d: expected i64 LEB128 (integer constant): value out of range");
  // threads must fit an i32.
  Bytes payload = {0x01, 0x00, 0x00, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x00, 0x00};
  CHECK(read_error(assemble({{0x01, kStringsK}, {0x02, payload}})) ==
        "@0x00000012: expected i32 LEB128 (threads): value out of range");
}

TEST_CASE("bytecode: bad section lengths") {
  Bytes longer = tiny();
  longer[12] = 0x40;  // kernels section size 64; 19 bytes follow
  CHECK(read_error(longer) ==
        "@0x0000000c: expected kernels section size at most 19 (the bytes left in the input): "
        "found 64");
  Bytes shorter = tiny();
  shorter[12] = 0x0c;  // one byte short: the barrier falls outside the section
  fix_checksum(shorter);
  CHECK(read_error(shorter) ==
        "@0x00000018: expected statement count that fits the kernels section: 1 items need at "
        "least 1 bytes, 0 are left");
  Bytes cut_op = tiny();
  cut_op[12] = 0x0b;  // two bytes short: the statement count falls outside the section
  fix_checksum(cut_op);
  CHECK(read_error(cut_op) ==
        "@0x00000018: expected u32 LEB128 (statement count): ran past the end of the kernels "
        "section");
  CHECK(read_error(assemble({{0x01, {0x00, 0x00}}, {0x02, {0x00}}})) ==
        "@0x00000009: expected the end of the strings section: 1 bytes left unread");
  CHECK(read_error(assemble({{0x01, {0x01, 0x05, 'a'}}, {0x02, {0x00}}})) ==
        "@0x00000009: expected string length at most 1 (the bytes left in the section): found 5");
  CHECK(read_error(assemble({{0x01, {0x7f, 0x00}}, {0x02, {0x00}}})) ==
        "@0x00000008: expected string count that fits the strings section: 127 items need at "
        "least 127 bytes, 1 are left");
}

TEST_CASE("bytecode: bad op code") {
  Bytes bytes = tiny();
  REQUIRE(bytes[25] == 0x0c);
  bytes[25] = 0x7f;
  fix_checksum(bytes);
  CHECK(read_error(bytes) == "@0x00000019: unknown op code 0x7f in kernel 'k'");
  bytes[25] = 0x00;
  fix_checksum(bytes);
  CHECK(read_error(bytes) == "@0x00000019: unknown op code 0x00 in kernel 'k'");
}

TEST_CASE("bytecode: symbol references are range- and kind-checked") {
  CHECK(read_error(two_symbol_kernel({0x01, 0x03, 0x0c}, {0x00})) ==
        "@0x0000001c: symbol reference 12 out of range (2 symbols declared) in kernel 'k'");
  CHECK(read_error(two_symbol_kernel({0x01, 0x03, 0x00}, {0x00})).empty());
  // serial <symbol 0> in 0 .. 4 {}: symbol 0 is a scalar parameter, not a loop variable.
  Bytes loop = {0x01, 0x08, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x04, 0x00, 0x00};
  CHECK(read_error(two_symbol_kernel({0x01, 0x03, 0x00}, loop)) ==
        "@0x00000023: expected a loopvar symbol (loop variable): symbol 0 'k' is scalar in kernel 'k'");
  loop[3] = 0x01;
  CHECK(read_error(two_symbol_kernel({0x01, 0x03, 0x00}, loop)).empty());
  CHECK(read_error(two_symbol_kernel({0x01, 0x03, 0x00}, {0x01, 0x01, 0x01})) ==
        "@0x00000022: expected a shared, fragment, local or mbarrier symbol (declared symbol): "
        "symbol 1 'k' is loopvar in kernel 'k'");
  // Operands may name any kind (the verifier judges them): a load from a scalar parameter reads.
  CHECK(read_error(two_symbol_kernel({0x01, 0x09, 0x00, 0x00}, {0x00})).empty());
}

TEST_CASE("bytecode: enum values are range-checked") {
  CHECK(read_error(two_symbol_kernel({0x01, 0x00, 0x0a, 0x00}, {0x00})) ==
        "@0x0000001c: unknown dtype 0x0a in kernel 'k'");
  CHECK(read_error(two_symbol_kernel({0x01, 0x0a}, {0x00})) ==
        "@0x0000001b: unknown expression kind 0x0a in kernel 'k'");
  CHECK(read_error(two_symbol_kernel({0x01, 0x04, 0x04}, {0x00})) ==
        "@0x0000001c: unknown builtin 0x04 in kernel 'k'");
  CHECK(read_error(two_symbol_kernel({0x01, 0x06, 0x12}, {0x00})) ==
        "@0x0000001c: unknown binary operator 0x12 in kernel 'k'");
  CHECK(read_error(two_symbol_kernel({0x01, 0x07, 0x12}, {0x00})) ==
        "@0x0000001c: unknown function 0x12 in kernel 'k'");
  CHECK(read_error(two_symbol_kernel({0x01, 0x02, 0x02}, {0x00})) ==
        "@0x0000001c: expected bool constant (0 or 1): found 0x02");
  CHECK(read_error(two_symbol_kernel({0x01, 0x02, 0x01}, {0x02, 0x12, 0x03, 0x13})) ==
        "@0x00000022: unknown fence scope 0x03 in kernel 'k'");
  // ceildiv takes two arguments: with one, the next bytes are read as the second.
  CHECK(read_error(two_symbol_kernel({0x01, 0x07, 0x0f, 0x00, 0x03, 0x08}, {0x00})) ==
        "@0x00000020: unknown expression kind 0x20 in kernel 'k'");
  Bytes caps = {0x01, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x80, 0x10, 0x00};
  CHECK(read_error(assemble({{0x01, kStringsK}, {0x02, caps}})) ==
        "@0x00000014: expected capability bits 0x7ff: found 0x800 in kernel 'k'");
}

TEST_CASE("bytecode: nesting depth is bounded") {
  Bytes grid = {0x01};
  for (int i = 0; i < 100; ++i) grid.insert(grid.end(), {0x05, 0x00});  // -(-(-(...)))
  grid.insert(grid.end(), {0x00, 0x03, 0x01});
  Bytes payload = {0x01, 0x00, 0x00, 0x00};
  payload.insert(payload.end(), grid.begin(), grid.end());
  payload.insert(payload.end(), {0x20, 0x00, 0x00, 0x00});
  // Payloads above 127 bytes need a two-byte size: build this one without assemble().
  auto build = [&](const Bytes& kernels) {
    Bytes out = {'T', 'B', 'C', 0x01, 0x01, 0x00, 0x01, 0x03, 0x01, 0x01, 'k', 0x02};
    out.push_back(static_cast<uint8_t>(0x80 | (kernels.size() & 0x7f)));
    out.push_back(static_cast<uint8_t>(kernels.size() >> 7));
    out.insert(out.end(), kernels.begin(), kernels.end());
    out.insert(out.end(), {0x7f, 0x04, 0, 0, 0, 0});
    fix_checksum(out);
    return out;
  };
  CHECK(read_error(build(payload)).empty());
  for (int i = 0; i < 30; ++i) payload.insert(payload.begin() + 5, {0x05, 0x00});
  CHECK(read_error(build(payload)) ==
        "@0x00000113: expected nesting depth at most 128: nesting too deep in kernel 'k'");
}

TEST_CASE("bytecode: wrong checksum") {
  Bytes bytes = tiny();
  uint32_t computed = bytecode::crc32(std::span<const uint8_t>(bytes).first(26));
  bytes[31] ^= 0xff;
  uint32_t stored = bytes[28] | bytes[29] << 8 | bytes[30] << 16 | static_cast<uint32_t>(bytes[31]) << 24;
  CHECK(read_error(bytes) == absl::StrFormat("@0x0000001c: checksum mismatch: stored 0x%08x, "
                                             "computed 0x%08x",
                                             stored, computed));
  Bytes other = tiny();
  other[21] = 0x21;  // threads 33: well formed, but not what was checksummed
  CHECK(read_error(other).find("@0x0000001c: checksum mismatch: stored 0x") == 0);
  Bytes size = tiny();
  size[27] = 0x05;
  CHECK(read_error(size) == "@0x0000001b: expected checksum section size 4: found 5");
}

TEST_CASE("bytecode: bad magic and unsupported version") {
  Bytes bytes = tiny();
  bytes[3] = 0x02;
  CHECK(read_error(bytes) == "@0x00000000: expected magic 'TBC\\x01': found 54 42 43 02");
  bytes = tiny();
  bytes[4] = 0x02;
  CHECK(read_error(bytes) == "@0x00000004: expected version 1: unsupported version 2");
  CHECK(read_error({}) == "@0x00000000: expected magic 'TBC\\x01': ran past the end of the input");
}

TEST_CASE("bytecode: section ids, order and trailing bytes") {
  CHECK(read_error(assemble({{0x01, {0x00}}, {0x05, {}}})) == "@0x00000009: unknown section id 0x05");
  CHECK(read_error(assemble({{0x02, {0x00}}, {0x01, {0x00}}})) ==
        "@0x00000006: expected section 'strings' (0x01): found 'kernels' (0x02)");
  CHECK(read_error(assemble({{0x01, {0x00}}, {0x01, {0x00}}})) ==
        "@0x00000009: expected sections in increasing id order: section 'strings' (0x01) follows "
        "'strings' (0x01)");
  CHECK(read_error(assemble({{0x01, {0x00}}})) ==
        "@0x00000009: expected section 'kernels' (0x02): found 'checksum' (0x7f)");
  Bytes trailing = tiny();
  trailing.push_back(0x00);
  CHECK(read_error(trailing) ==
        "@0x00000020: expected the end of the input after the checksum: 1 trailing bytes");
  CHECK(read_error(two_symbol_kernel({0x01, 0x03, 0x00}, {0x00})).empty());
}

TEST_CASE("bytecode: target blobs are validated and skipped") {
  Bytes blobs = {0x02, 0x05, 's', 'm', '_', '9', '0', 0x02, 0xde, 0xad,  // sm_90: 2 bytes
                 0x03, 'c', 'p', 'u', 0x00};                              // cpu: empty
  auto m = read_bytecode(assemble({{0x01, {0x00}}, {0x02, {0x00}}, {0x03, blobs}}));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  CHECK(m->kernels.empty());
  CHECK(read_error(assemble({{0x01, {0x00}}, {0x02, {0x00}}, {0x03, {0x01, 0x00, 0x00}}})) ==
        "@0x0000000f: expected a target name: found an empty string");
  CHECK(read_error(assemble({{0x01, {0x00}}, {0x02, {0x00}}, {0x03, {0x01, 0x01, 'x', 0x09}}})) ==
        "@0x00000011: expected target blob length at most 0 (the bytes left in the section): found 9");
}

TEST_CASE("bytecode: string references and flags") {
  Bytes payload = {0x01, 0x04, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00};
  CHECK(read_error(assemble({{0x01, kStringsK}, {0x02, payload}})) ==
        "@0x0000000e: string reference 4 out of range (1 strings) (kernel name)");
  // symbol headers: a parameter count of 1 with no parameter symbol.
  Bytes params = {0x01, 0x00, 0x01, 0x01, 0x00, 0x05, 0x03, 0x00,
                  0x00, 0x20, 0x00, 0x00, 0x00};
  CHECK(read_error(assemble({{0x01, kStringsK}, {0x02, params}})) ==
        "@0x00000012: expected a parameter for symbol 0 'k': found loopvar in kernel 'k'");
}

}  // namespace
}  // namespace tilert
