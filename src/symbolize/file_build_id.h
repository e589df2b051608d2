// The GNU build-id note of an ELF file on disk: the same bytes a recorder reads
// from the loaded image's notes (recorder/modules.cc), since the loaded
// segments are the file's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memloupe::symbolize {

// Empty when the file cannot be opened, is not ELF or has no build-id.
std::vector<uint8_t> file_build_id(const std::string& path);

}  // namespace memloupe::symbolize
