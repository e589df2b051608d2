// The types table: which C++ type each allocation site creates, as finalise
// inferred it from the binaries' DWARF (src/types/infer_site.h) and stored in
// the trace's Types chunk, so a trace names its types on any machine.
//
// A site is the innermost return address of an Alloc's backtrace: the return
// address into the code that called operator new / malloc. Template code is
// instantiated per type, so that address names one type even when the call
// sits deep inside std:: (docs/TYPES.md says when it does not).
//
// Chunk payload (ChunkType::Types, raw; zstd like any chunk):
//   varint n                         entries, by ascending address
//   n x { varint address - previous address (the first: the address itself)
//         u8     TypeRule            how the type was found
//         u8     TypeShape
//         varint type_size           sizeof(T) from DWARF, > 0
//         varint block_size          Object: every block of the site had this
//                                    size (sizeof T, or of make_shared's control
//                                    block); Array: 0
//         string name }              varint length <= kMaxString, then bytes
//                                    (empty for TypeRule::Unknown only)
// Untyped sites are listed too when all their blocks had one size (rule
// Unknown), so the views can group them as "(unknown, N B)".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/expected.h"

namespace memloupe::types {

// In order of trust (docs/TYPES.md § Rules).
enum class TypeRule : uint8_t {
  Unknown = 0,             // no rule agreed; every block had block_size bytes (name empty)
  InlinedConstructor = 1,  // T::T inlined right after the call
  CalledConstructor = 2,   // the next call after it is to an out-of-line T::T
  MakeShared = 3,          // std::allocator<_Sp_counted_ptr_inplace<T, ...>>: T with its control block
  Allocator = 4,           // std::allocator<T>::allocate / __new_allocator<T> (vectors, nodes, buckets)
  MakeUnique = 5,          // std::make_unique<T>
};
inline constexpr uint8_t kMaxRule = 5;
std::string_view rule_name(TypeRule rule);  // "inlined-ctor", "called-ctor", ...

enum class TypeShape : uint8_t {
  Object = 0,  // one object per block, of block_size bytes
  Array = 1,   // a buffer of size / type_size elements
};

struct SiteType {
  std::string name;        // demangled, qualified: "ns::Foo", "std::_Rb_tree_node<...>"
  uint64_t type_size = 0;  // sizeof(T)
  uint64_t block_size = 0; // see the chunk layout
  TypeShape shape = TypeShape::Object;
  TypeRule rule = TypeRule::Allocator;

  // Objects (elements, for arrays) in a block of `size` bytes; 0 when the size
  // disagrees with the type (the block is then counted as unknown).
  uint64_t objects_in(uint64_t size) const {
    if (shape == TypeShape::Object) return size == block_size ? 1 : 0;
    return size % type_size == 0 ? size / type_size : 0;
  }
  bool operator==(const SiteType&) const = default;
};

using TypeTable = std::unordered_map<uint64_t, SiteType>;  // by site address

std::vector<uint8_t> encode_types(const TypeTable& table);
// Decodes a Types payload into `table`; on damage returns the error (naming the
// offset through `where`) and keeps the entries before it.
std::optional<Error> decode_types(std::span<const uint8_t> payload, uint64_t chunk_offset,
                                  bool compressed, TypeTable& table);

struct LoadedTypes {
  TypeTable table;
  bool present = false;          // the trace has a Types chunk (it was finalised with types)
  std::optional<Error> problem;  // a damaged Types chunk: what was wrong, where
};
// Finds and decodes the Types chunks of a memloupe trace file's bytes. A trace
// without one (older, or not finalised) gives an empty table; damage elsewhere
// in the file is the event reader's to report.
LoadedTypes load_types(std::span<const uint8_t> file);
// The same from a file; a file that cannot be read gives an empty table (its
// reader reports that).
LoadedTypes load_types_file(const std::string& path);

}  // namespace memloupe::types
