#include "symbolize/inflated_files.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace memloupe::symbolize {
namespace {

using ElfPtr = std::unique_ptr<Elf, int (*)(Elf*)>;

ElfPtr elf_of(int fd, Elf_Cmd cmd) {
  elf_version(EV_CURRENT);
  return ElfPtr(elf_begin(fd, cmd, nullptr), elf_end);
}

bool has_compressed_section(int fd) {
  const ElfPtr elf = elf_of(fd, ELF_C_READ_MMAP);
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return false;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn)) != nullptr;) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) != nullptr && (sh.sh_flags & SHF_COMPRESSED) != 0) return true;
  }
  return false;
}

bool copy_bytes(int from, int to, off_t size) {
  for (off_t offset = 0; offset < size;) {
    if (sendfile(to, from, &offset, static_cast<size_t>(size - offset)) <= 0) return false;
  }
  return true;
}

// Inflates every compressed section of the ELF file `image` (`size` bytes)
// where it is. Each inflated section goes after the file's end, so that every
// other byte keeps its offset: the program headers (libdwfl reads the debug
// file's notes through them) and the section header table, rewritten where
// it is with the inflated sections' new offsets, sizes and flags. The
// compressed bytes left behind are referred to by nothing.
bool inflate_in_place(int image, off_t size) {
  const ElfPtr elf = elf_of(image, ELF_C_RDWR);
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return false;
  uint64_t end = static_cast<uint64_t>(size);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn)) != nullptr;) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) return false;
    if ((sh.sh_flags & SHF_COMPRESSED) == 0) continue;
    // Sets the section's size, alignment and flags to the inflated ones. The
    // inflated bytes are written by elf_update only from a data block marked
    // dirty: left as elf_compress leaves them, the file would hold zeros.
    Elf_Data* data = nullptr;
    if (elf_compress(scn, 0, 0) != 1 || (data = elf_getdata(scn, nullptr)) == nullptr ||
        elf_flagdata(data, ELF_C_SET, ELF_F_DIRTY) == 0 || gelf_getshdr(scn, &sh) == nullptr)
      return false;
    const uint64_t align = std::max<uint64_t>(sh.sh_addralign, 1);
    end = (end + align - 1) / align * align;
    sh.sh_offset = end;
    end += sh.sh_size;
    if (gelf_update_shdr(scn, &sh) == 0) return false;
  }
  // The layout is the one set above, not libelf's own (which would move
  // every section and leave the program headers' offsets stale).
  elf_flagelf(elf.get(), ELF_C_SET, ELF_F_LAYOUT);
  return elf_update(elf.get(), ELF_C_WRITE) >= 0;
}

// The inflated copy of `fd`'s file (`size` bytes), or none.
format::UniqueFd inflate(int fd, off_t size) {
  if (!has_compressed_section(fd)) return {};
  format::UniqueFd image(memfd_create("memloupe-inflated-elf", MFD_CLOEXEC));
  if (!image || !copy_bytes(fd, image.get(), size) || !inflate_in_place(image.get(), size)) return {};
  return image;
}

}  // namespace

int InflatedFiles::open_inflated(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  const Key key(st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  Copy* copy = nullptr;
  {
    std::lock_guard lock(mutex_);
    std::unique_ptr<Copy>& slot = copies_[key];
    if (!slot) slot = std::make_unique<Copy>();
    copy = slot.get();  // stays where it is: the map only grows
  }
  std::lock_guard lock(copy->mutex);
  if (!copy->made) {
    copy->image = inflate(fd, st.st_size);
    copy->made = true;
  }
  return copy->image ? fcntl(copy->image.get(), F_DUPFD_CLOEXEC, 0) : -1;
}

size_t InflatedFiles::inflated() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [key, copy] : copies_) {
    std::lock_guard copying(copy->mutex);
    n += copy->image ? 1 : 0;
  }
  return n;
}

int InflatedFiles::open_inflated(const std::string& path) {
  const format::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  return fd ? open_inflated(fd.get()) : -1;
}

}  // namespace memloupe::symbolize
