// The source file and line of a module's global variables, from its DWARF:
// every DW_TAG_variable whose location is one fixed address (DW_OP_addr) —
// namespace-scope variables, static data members' definitions and functions'
// static locals — by that address. Names the global roots of heap snapshots
// (global_names.h) with the symbol the ELF symbol table gives.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "symbolize/elf_file.h"

namespace memloupe::symbolize {

struct SourceLine {
  std::string file;
  uint32_t line = 0;
};

class GlobalLines {
 public:
  // One walk of the module's units (none without DWARF).
  explicit GlobalLines(ElfFile& file);

  // The variable at ELF virtual address `vaddr` (where its symbol starts), or
  // nullptr. Its file is named on the first call for it: naming a file
  // parses its unit's whole line table (libdw 0.188's dwarf_decl_file), which
  // for every variable of libc was a fifth of the walk, and a snapshot's roots
  // ask for a few. One thread at a time (the module's libdw session).
  const SourceLine* at(uint64_t vaddr) const;

 private:
  struct Declared {
    Dwarf_Die die;         // valid while the session is
    const char* comp_dir;  // its unit's, in the session's data
    uint32_t line;
  };
  std::unordered_map<uint64_t, Declared> declared_;
  mutable std::unordered_map<uint64_t, SourceLine> lines_;  // the declared ones asked for
};

}  // namespace memloupe::symbolize
