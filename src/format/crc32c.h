// CRC-32C (Castagnoli), as used by iSCSI/ext4: reflected polynomial 0x82F63B78,
// initial value and final xor 0xFFFFFFFF. crc32c("123456789") == 0xE3069283.
// With SSE4.2's crc32 instruction where the CPU has it, else table-driven
// (slicing by 8, tables built at compile time); either is safe to call from
// inside malloc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::format {

uint32_t crc32c(const uint8_t* data, size_t size, uint32_t crc = 0) noexcept;
// The table-driven code alone (tests compare the two).
uint32_t crc32c_portable(const uint8_t* data, size_t size, uint32_t crc = 0) noexcept;

}  // namespace memloupe::format
