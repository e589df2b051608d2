#include "attach/elf_symbol.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace memloupe::attach {

Expected<uint64_t> dynamic_symbol(const std::string& path, const std::string& name) {
  elf_version(EV_CURRENT);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  std::unique_ptr<Elf, int (*)(Elf*)> elf(elf_begin(fd, ELF_C_READ, nullptr), elf_end);
  Expected<uint64_t> result = Error{path + ": no function " + name + " in its dynamic symbol table"};
  if (elf == nullptr) result = Error{path + ": not an ELF file (" + elf_errmsg(-1) + ")"};
  for (Elf_Scn* scn = elf ? elf_nextscn(elf.get(), nullptr) : nullptr; scn != nullptr && !result;
       scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_DYNSYM || shdr.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data != nullptr && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
      const char* s = elf_strptr(elf.get(), shdr.sh_link, sym.st_name);
      if (s != nullptr && name == s) {
        result = sym.st_value;
        break;
      }
    }
  }
  ::close(fd);
  return result;
}

}  // namespace memloupe::attach
