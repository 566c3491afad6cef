// libFuzzer target for the .tbc reader. Any input must be read without crashing; an accepted one
// must write, re-read to the same module, and write again to the same bytes.
//
// Random mutations almost never keep the CRC right, which would stop every input at the checksum.
// So when the input ends like a checksum section (0x7f 0x04 + 4 bytes) the target first rewrites
// the stored CRC to match, and the validation of everything before it gets exercised. Inputs that
// do not end that way are read as they are (they test the section and trailing-byte checks); a
// wrong checksum itself is covered by tests/ir/bytecode/malformed_test.cc.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ir/bytecode/bytecode.h"
#include "ir/bytecode/checksum.h"
#include "ir/bytecode/format.h"

namespace {

void repair_checksum(std::vector<uint8_t>& bytes) {
  constexpr size_t kSectionBytes = 2 + tilert::bytecode::kChecksumSize;
  if (bytes.size() < kSectionBytes) return;
  size_t section = bytes.size() - kSectionBytes;
  if (bytes[section] != static_cast<uint8_t>(tilert::bytecode::SectionId::kChecksum) ||
      bytes[section + 1] != tilert::bytecode::kChecksumSize)
    return;
  uint32_t crc = tilert::bytecode::crc32(std::span<const uint8_t>(bytes).first(section));
  for (size_t i = 0; i < 4; ++i) bytes[section + 2 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> input(data, data + size);
  repair_checksum(input);
  auto module = tilert::read_bytecode(input);
  if (!module.ok()) return 0;
  std::vector<uint8_t> written = tilert::write_bytecode(*module);
  auto reread = tilert::read_bytecode(written);
  if (!reread.ok() || !(*reread == *module)) __builtin_trap();
  if (tilert::write_bytecode(*reread) != written) __builtin_trap();
  return 0;
}
