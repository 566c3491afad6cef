// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): the .tbc checksum.
#pragma once

#include <cstdint>
#include <span>

namespace tilert::bytecode {

uint32_t crc32(std::span<const uint8_t> bytes);

}  // namespace tilert::bytecode
