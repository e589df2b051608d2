// A module's global variables by address: its object symbols (STT_OBJECT and
// STT_TLS with a size, from .symtab or else .dynsym, through libdw) and its
// sections, to name the words of a writable segment that no symbol covers.
// Used to name heap-snapshot roots (src/retention/snapshot_load.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "symbolize/elf_file.h"

namespace memloupe::symbolize {

struct DataSymbol {
  uint64_t vaddr = 0;  // ELF virtual address
  uint64_t size = 0;
  std::string name;    // demangled (by symbol_at: demangle_once)
  const char* mangled = nullptr;  // in the module's symbol table (libdw's, alive as the ElfFile); null once demangled
};

struct DataSection {
  uint64_t vaddr = 0, size = 0;
  std::string name;    // ".data", ".bss", ".got", ...
};

class DataSymbols {
 public:
  explicit DataSymbols(ElfFile& file);

  // The object symbol whose [vaddr, vaddr + size) holds `vaddr`; where symbols
  // overlap (aliases), the smallest. Its name is demangled then, once: a
  // module has thousands (libc's ~2,800: 4% of a short `memloupe run`'s
  // instructions when all were demangled up front), a snapshot names a few.
  const DataSymbol* symbol_at(uint64_t vaddr);
  // The allocated section that holds `vaddr`.
  const DataSection* section_at(uint64_t vaddr) const;

 private:
  std::vector<DataSymbol> symbols_;    // by vaddr, then size
  std::vector<DataSection> sections_;  // by vaddr
};

}  // namespace memloupe::symbolize
