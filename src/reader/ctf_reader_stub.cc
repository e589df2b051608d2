// Stand-in for the memtrace CTF reader, compiled only while ctf_reader.cc does
// not exist (see CMakeLists.txt); delete it when the real reader lands.
#include "reader/ctf_reader.h"

namespace memloupe::reader {

bool is_ctf(std::span<const uint8_t> data) {
  return data.size() >= 4 && data[0] == 0xc1 && data[1] == 0x1f && data[2] == 0xfc &&
         data[3] == 0xc1;
}

Expected<std::unique_ptr<Reader>> open_ctf(std::unique_ptr<Bytes> bytes) {
  return Error{bytes->name() + ": memtrace CTF support not built", 0};
}

const CtfDetails* ctf_details(const Reader&) { return nullptr; }

}  // namespace memloupe::reader
