#include "types/type_table.h"

#include <algorithm>

#include "format/chunk.h"
#include "format/varint.h"
#include "format/wire.h"
#include "reader/bytes.h"
#include "reader/chunk_io.h"
#include "reader/cursor.h"

namespace memloupe::types {

std::string_view rule_name(TypeRule rule) {
  switch (rule) {
    case TypeRule::Unknown: return "unknown";
    case TypeRule::InlinedConstructor: return "inlined-ctor";
    case TypeRule::CalledConstructor: return "called-ctor";
    case TypeRule::MakeShared: return "make_shared";
    case TypeRule::Allocator: return "allocator";
    case TypeRule::MakeUnique: return "make_unique";
  }
  return "?";
}

std::vector<uint8_t> encode_types(const TypeTable& table) {
  std::vector<uint64_t> addresses;
  addresses.reserve(table.size());
  for (const auto& entry : table) addresses.push_back(entry.first);
  std::ranges::sort(addresses);
  std::vector<uint8_t> out;
  uint8_t buf[format::kMaxVarint];
  auto varint = [&](uint64_t v) { out.insert(out.end(), buf, format::put_varint(buf, v)); };
  varint(addresses.size());
  uint64_t previous = 0;
  for (uint64_t address : addresses) {
    const SiteType& t = table.at(address);
    varint(address - previous);
    previous = address;
    out.push_back(static_cast<uint8_t>(t.rule));
    out.push_back(static_cast<uint8_t>(t.shape));
    varint(t.type_size);
    varint(t.block_size);
    const size_t n = std::min<size_t>(t.name.size(), format::kMaxString);
    varint(n);
    out.insert(out.end(), t.name.begin(), t.name.begin() + static_cast<ptrdiff_t>(n));
  }
  return out;
}

std::optional<Error> decode_types(std::span<const uint8_t> payload, uint64_t chunk_offset,
                                  bool compressed, TypeTable& table) {
  reader::Cursor c(payload, compressed ? chunk_offset : chunk_offset + format::kChunkHeaderSize, compressed);
  uint64_t n = 0;
  // Each entry takes at least 6 bytes: a count beyond that is damage, not a reason to loop.
  if (!c.varint(n) || n > c.remaining() / 6) return c.expected("a types entry count");
  uint64_t address = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t delta = 0;
    uint8_t rule = 0, shape = 0;
    SiteType t;
    std::string_view name;
    if (!c.varint(delta) || (i > 0 && delta == 0) || delta > UINT64_MAX - address)
      return c.expected("an ascending site address");
    if (!c.u8(rule) || rule > kMaxRule) return c.expected("a type rule (0-5)");
    if (!c.u8(shape) || shape > 1) return c.expected("a type shape (0 or 1)");
    if (!c.varint(t.type_size) || t.type_size == 0) return c.expected("a type size > 0");
    if (!c.varint(t.block_size) || (shape == 0) != (t.block_size != 0))
      return c.expected("a block size (> 0 for one object, 0 for an array)");
    if (!c.string(name, format::kMaxString) || (rule == 0) != name.empty() || (rule == 0 && shape != 0))
      return c.expected("a type name (empty only for an unknown type of one block size)");
    address += delta;
    t.rule = static_cast<TypeRule>(rule);
    t.shape = static_cast<TypeShape>(shape);
    t.name = name;
    table[address] = std::move(t);
  }
  if (!c.at_end()) return c.expected("the end of the types chunk");
  return std::nullopt;
}

LoadedTypes load_types(std::span<const uint8_t> file) {
  LoadedTypes out;
  if (!reader::check_prologue(file)) return out;
  std::vector<uint8_t> buffer;
  // Hops from header to header (as the symbols loader does): a Types chunk
  // whose payload is damaged is reported, and hopping goes on past it.
  reader::walk_chunks(file, format::kPrologueSize, file.size(), reader::BrokenHeader::Stop, [&](const reader::ChunkHop& hop) {
    if (!hop.is(format::ChunkType::Types)) return true;
    const uint64_t at = hop.offset;
    out.present = true;
    auto chunk = reader::read_chunk(file, at);
    if (!chunk) {
      out.problem = Error{"the types chunk at offset " + std::to_string(at) + ": " + chunk.error().message,
                          chunk.error().offset};
      return true;
    }
    auto payload = reader::chunk_payload(*chunk, buffer);
    if (!payload) {
      out.problem = payload.error();
      return true;
    }
    if (auto e = decode_types(*payload, chunk->offset, chunk->flags & format::kChunkZstd, out.table)) out.problem = e;
    return true;
  });
  return out;
}

LoadedTypes load_types_file(const std::string& path) {
  auto bytes = reader::Bytes::map_file(path);
  return bytes ? load_types((*bytes)->data()) : LoadedTypes{};
}

}  // namespace memloupe::types
