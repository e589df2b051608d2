#include "reader/streams.h"

#include "format/varint.h"

namespace memloupe::reader {

std::optional<Error> read_columns(Cursor& c, std::array<Cursor, kStreams>& out) {
  uint8_t count;
  if (!c.u8(count) || count != kStreams)
    return c.expected("a stream count of " + std::to_string(kStreams));
  uint64_t lengths[kStreams];
  uint64_t total = 0;
  for (uint64_t& n : lengths) {
    // Each length is bounded by what remains, so the sum cannot overflow.
    if (!c.varint_max(n, c.remaining()))
      return c.expected("a stream length (varint) within the chunk");
    total += n;
  }
  const size_t table_end = c.pos();
  if (total != c.remaining())
    return c.expected_at(table_end, "streams filling the rest of the chunk (" +
                                        std::to_string(c.remaining()) + " bytes), found " +
                                        std::to_string(total));
  for (size_t i = 0; i < kStreams; ++i) (void)c.split(lengths[i], out[i]);
  return std::nullopt;
}

void write_columns(std::vector<uint8_t>& payload, const Taps& streams) {
  payload.push_back(static_cast<uint8_t>(kStreams));
  uint8_t buf[format::kMaxVarint];
  for (const TapBuffer& s : streams) payload.insert(payload.end(), buf, format::put_varint(buf, s.size()));
  for (const TapBuffer& s : streams) payload.insert(payload.end(), s.bytes().begin(), s.bytes().end());
}

}  // namespace memloupe::reader
