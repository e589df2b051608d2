// The source file and line of a module's global variables, from its DWARF:
// every DW_TAG_variable whose location is one fixed address (DW_OP_addr) —
// namespace-scope variables, static data members' definitions and functions'
// static locals — by that address. Names the global roots of heap snapshots
// (global_names.h) with the symbol the ELF symbol table gives.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/elf_file.h"
#include "symbolize/inflated_cache.h"

namespace memloupe::symbolize {

struct SourceLine {
  std::string file;
  uint32_t line = 0;
};

class GlobalLines {
 public:
  // One walk of the module's units (none without DWARF), or its table from
  // `cache` (InflatedCache::find_globals), where an earlier walk of the
  // same debug file left it. Walking libc's ~360,000 DIEs was ~250 M
  // instructions (~24 ms) of every finalising; its table is ~24 KB.
  explicit GlobalLines(ElfFile& file, const std::optional<InflatedCache>& cache = std::nullopt);

  // The key of the file `file`'s DWARF is read from (its separate debug
  // file, or itself): its DIE offsets are that file's (a dwz'ed and a plain
  // debug file can share a build-id, not their offsets). None without a
  // build-id or DWARF.
  static std::optional<InflatedSource> key_of(const ElfFile& file);

  // The variable at ELF virtual address `vaddr` (where its symbol starts), or
  // nullptr. Its file is named on the first call for it: naming a file
  // parses its unit's whole line table (libdw 0.188's dwarf_decl_file), which
  // for every variable of libc was a fifth of the walk, and a snapshot's roots
  // ask for a few. A variable from a cached table is checked against its DIE
  // (a variable at that address, declared at that line) and a mismatch walks
  // the units again: a table never gives a wrong line. One thread at a time
  // (the module's libdw session).
  const SourceLine* at(uint64_t vaddr) const;

  struct Declared {
    Dwarf_Off offset = 0;  // of its DIE, in the file its DWARF is read from
    uint32_t line = 0;
    // The walk's: the DIE (valid while the session is) and its unit's
    // comp_dir, in the session's data. A cached table's: none.
    Dwarf_Die die{};
    const char* comp_dir = nullptr;
    bool walked = false;
  };
  // DWARF address -> its variable.
  using Table = std::unordered_map<uint64_t, Declared>;

  // The table's bytes: (DWARF address, DIE offset, line) of each variable.
  static std::vector<uint8_t> encode(const Table& table);
  static std::optional<Table> decode(std::span<const uint8_t> bytes);

  bool from_cache() const { return from_cache_; }

 private:
  Table walk() const;
  // Whether every walked DIE is found again by its offset (with its unit's
  // comp_dir): only then can a table name them by offsets.
  bool addressable(const Table& table) const;

  Dwfl_Module* module_ = nullptr;
  Dwarf* dwarf_ = nullptr;
  Dwarf_Addr bias_ = 0;
  mutable Table declared_;
  mutable bool from_cache_ = false;
  mutable std::unordered_map<uint64_t, SourceLine> lines_;  // the declared ones asked for
};

}  // namespace memloupe::symbolize
