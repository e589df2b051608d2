// Inferring the C++ type an allocation site creates, from one module's DWARF.
//
// A site is a return address into the code that called operator new (or
// malloc). The candidates, most trusted first (docs/TYPES.md § Rules):
//   1. a constructor T::T inlined right after the call (its code starts within
//      kCtorWindow bytes of the return address), the outermost one if several
//      start there (a derived class's constructor inlines its base's);
//   2. the next call after it goes to an out-of-line T::T;
//   3. the function scopes holding the call name the type: an allocator's
//      allocate() (`std::__new_allocator<T>`, `std::allocator<T>`), or
//      `std::make_unique<T>`. Scopes are tried innermost first, so the
//      allocator inlined into vector/map/hashtable code answers before the
//      user's function around it.
// A constructor or allocator of `std::_Sp_counted_ptr_inplace<T, ...>` is
// make_shared's control block: the type is T, the block the control block.
//
// Each candidate carries sizeof from DWARF; whether the site's requested sizes
// agree with it is decided by the caller, which sees every allocation
// (finalize_types.h), and the first candidate that agrees wins.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/unit_index.h"
#include "types/type_table.h"

namespace memloupe::types {

struct Candidate {
  std::string name;         // the type T, qualified
  uint64_t type_size = 0;   // sizeof(T)
  uint64_t block_size = 0;  // make_shared: sizeof the control block; else 0
  TypeRule rule = TypeRule::Allocator;
};

// How far after the return address an inlined constructor may start, and how
// far the next call is looked for (bytes of code).
inline constexpr uint64_t kCtorWindow = 16;
inline constexpr uint64_t kCallWindow = 48;

class SiteInferrer {
 public:
  explicit SiteInferrer(Dwfl_Module* module) : module_(module), units_(module) {}

  // For each of `return_vaddrs` (return addresses as addresses of the module's
  // ELF), its candidates. Batches are much cheaper than single sites: each
  // unit's DIE tree is walked once per batch.
  std::vector<std::vector<Candidate>> candidates(std::span<const uint64_t> return_vaddrs);

 private:
  std::optional<Candidate> inlined_constructor(Dwarf_Die subprogram, uint64_t pc);
  std::optional<Candidate> called_constructor(uint64_t pc);
  std::optional<Candidate> from_scope(Dwarf_Die scope);
  std::optional<Candidate> constructor(Dwarf_Die scope, TypeRule rule);
  std::optional<Candidate> describe(Dwarf_Die type, TypeRule rule);
  const std::string& type_name(Dwarf_Die type);
  const std::string& scope_prefix(Dwarf_Die type);
  std::span<const uint8_t> code(uint64_t vaddr, uint64_t length);

  Dwfl_Module* module_;
  symbolize::UnitIndex units_;
  std::unordered_map<uint64_t, std::string> names_;  // by DIE offset
  // "ns::Outer::" of every type DIE declared in a namespace or class, by DIE
  // offset, for the units walked so far (each walked once: parents are not in
  // libdw's DIEs, and dwarf_getscopes_die walks the unit for every DIE).
  std::unordered_map<uint64_t, std::string> prefixes_;
  std::unordered_map<uint64_t, bool> units_walked_;  // by unit DIE offset
  std::unordered_map<uint64_t, std::optional<Candidate>> called_;  // called_constructor by target
  struct Section {
    uint64_t start = 0;
    std::span<const uint8_t> bytes;
  };
  std::optional<std::vector<Section>> code_sections_;  // read on first use
};

}  // namespace memloupe::types
