#include "symbolize/file_build_id.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

namespace memloupe::symbolize {

std::vector<uint8_t> file_build_id(const std::string& path) {
  std::vector<uint8_t> id;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return id;
  elf_version(EV_CURRENT);
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    const void* bits = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    if (n > 0) id.assign(static_cast<const uint8_t*>(bits), static_cast<const uint8_t*>(bits) + n);
    elf_end(elf);
  }
  ::close(fd);
  return id;
}

}  // namespace memloupe::symbolize
