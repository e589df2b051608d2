// Reader::open / from_bytes (declared in reader/reader.h): recognise the format
// by its magic and hand the bytes to the matching reader. Defined here, above
// both readers, so that reader/ knows nothing of CTF: this is the one place
// that knows every format a trace may come in.
#include "reader/reader.h"

#include <cstring>

#include "ctf/ctf_reader.h"
#include "format/wire.h"
#include "reader/bytes.h"
#include "reader/native_reader.h"

namespace memloupe::reader {
namespace {

Expected<std::unique_ptr<Reader>> open_bytes(std::unique_ptr<Bytes> bytes) {
  const auto data = bytes->data();
  if (data.empty()) return Error{bytes->name() + ": the file is empty (not a trace)", 0};
  if (data.size() >= sizeof format::kFileMagic &&
      std::memcmp(data.data(), format::kFileMagic, sizeof format::kFileMagic) == 0)
    return open_native(std::move(bytes));
  if (is_ctf(data)) return open_ctf(std::move(bytes));
  return Error{bytes->name() +
                   ": not a trace (expected the memloupe magic \"\\x8aMLTRACE\" or the "
                   "memtrace CTF magic 0xC1FC1FC1 at offset 0)",
               0};
}

}  // namespace

Expected<std::unique_ptr<Reader>> Reader::open(const std::string& path) {
  auto bytes = Bytes::map_file(path);
  if (!bytes) return bytes.error();
  return open_bytes(std::move(*bytes));
}

Expected<std::unique_ptr<Reader>> Reader::from_bytes(std::vector<uint8_t> bytes,
                                                     std::string name) {
  return open_bytes(Bytes::from_vector(std::move(bytes), std::move(name)));
}

}  // namespace memloupe::reader
