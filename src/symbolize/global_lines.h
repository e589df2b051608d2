// The source file and line of a module's global variables, from its DWARF:
// every DW_TAG_variable whose location is one fixed address (DW_OP_addr) —
// namespace-scope variables, static data members' definitions and functions'
// static locals — by that address. Names the global roots of heap snapshots
// (global_names.h) with the symbol the ELF symbol table gives.
#pragma once

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

  // The variable at ELF virtual address `vaddr` (where its symbol starts), or nullptr.
  const SourceLine* at(uint64_t vaddr) const;

 private:
  std::unordered_map<uint64_t, SourceLine> lines_;
};

}  // namespace memloupe::symbolize
