#include "symbolize/data_symbols.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <algorithm>

#include "symbolize/demangle.h"

namespace memloupe::symbolize {

DataSymbols::DataSymbols(ElfFile& file) {
  Dwfl_Module* m = file.module();
  const int n = dwfl_module_getsymtab(m);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* name = dwfl_module_getsym_info(m, i, &sym, &addr, nullptr, nullptr, nullptr);
    const int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || sym.st_size == 0 || (type != STT_OBJECT && type != STT_TLS)) continue;
    // dwfl reports addresses relative to where the module was reported (bias 0).
    symbols_.push_back({.vaddr = addr, .size = sym.st_size, .mangled = name});
  }
  std::sort(symbols_.begin(), symbols_.end(), [](const DataSymbol& a, const DataSymbol& b) {
    return a.vaddr != b.vaddr ? a.vaddr < b.vaddr : a.size < b.size;
  });
  GElf_Addr bias = 0;
  if (Elf* elf = dwfl_module_getelf(m, &bias)) {
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
      for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == nullptr || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0) continue;
        const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
        sections_.push_back({sh.sh_addr + bias, sh.sh_size, name ? name : ""});
      }
    }
  }
  std::sort(sections_.begin(), sections_.end(),
            [](const DataSection& a, const DataSection& b) { return a.vaddr < b.vaddr; });
}

const DataSymbol* DataSymbols::symbol_at(uint64_t vaddr) {
  // Symbols are few enough per lookup region that a scan back from the first
  // symbol past vaddr is cheap; it finds the smallest enclosing one.
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const DataSymbol& s) { return v < s.vaddr; });
  DataSymbol* best = nullptr;
  for (int back = 0; it != symbols_.begin() && back < 64; ++back) {
    --it;
    if (vaddr < it->vaddr + it->size && (best == nullptr || it->size < best->size)) best = &*it;
  }
  if (best != nullptr) demangle_once(best->mangled, best->name);
  return best;
}

const DataSection* DataSymbols::section_at(uint64_t vaddr) const {
  auto it = std::upper_bound(sections_.begin(), sections_.end(), vaddr,
                             [](uint64_t v, const DataSection& s) { return v < s.vaddr; });
  if (it == sections_.begin()) return nullptr;
  --it;
  return vaddr < it->vaddr + it->size ? &*it : nullptr;
}

}  // namespace memloupe::symbolize
