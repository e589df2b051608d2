#include "symbolize/inflated_files.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace memloupe::symbolize {
namespace {

using ElfPtr = std::unique_ptr<Elf, int (*)(Elf*)>;

ElfPtr elf_of(int fd, Elf_Cmd cmd) {
  elf_version(EV_CURRENT);
  return ElfPtr(elf_begin(fd, cmd, nullptr), elf_end);
}

// What open_inflated needs to know of a file before inflating it.
struct Examined {
  bool compressed = false;        // has a compressed section
  std::vector<uint8_t> build_id;  // its GNU build-id, if any (the cache's key)
};

Examined examine(int fd) {
  Examined file;
  const ElfPtr elf = elf_of(fd, ELF_C_READ_MMAP);
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return file;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn)) != nullptr && !file.compressed;) {
    GElf_Shdr sh;
    file.compressed = gelf_getshdr(scn, &sh) != nullptr && (sh.sh_flags & SHF_COMPRESSED) != 0;
  }
  const void* bits = nullptr;
  if (const ssize_t n = dwelf_elf_gnu_build_id(elf.get(), &bits); file.compressed && n > 0)
    file.build_id.assign(static_cast<const uint8_t*>(bits), static_cast<const uint8_t*>(bits) + n);
  return file;
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

// The inflated copy of `fd`'s file (`size` bytes, with a compressed
// section), or none.
format::UniqueFd inflate(int fd, off_t size) {
  format::UniqueFd image(memfd_create("memloupe-inflated-elf", MFD_CLOEXEC));
  if (!image || !copy_bytes(fd, image.get(), size) || !inflate_in_place(image.get(), size)) return {};
  return image;
}

}  // namespace

InflatedFiles::InflatedFiles() : cache_(InflatedCache::from_environment()) {}

std::optional<InflatedSource> InflatedFiles::make(int fd, const struct stat& st, Copy& copy) const {
  const Examined file = examine(fd);
  if (!file.compressed) return std::nullopt;
  std::optional<InflatedSource> source;
  if (cache_ && !file.build_id.empty()) source = InflatedSource::of(file.build_id, st);
  if (source) copy.image = cache_->find(*source);
  copy.from_cache = static_cast<bool>(copy.image);
  if (copy.from_cache) return std::nullopt;
  copy.image = inflate(fd, st.st_size);
  return copy.image ? source : std::nullopt;
}

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
  std::optional<InflatedSource> to_store;
  int image = -1;
  {
    std::lock_guard lock(copy->mutex);
    if (!copy->made) {
      to_store = make(fd, st, *copy);
      copy->made = true;
    }
    if (copy->image) image = fcntl(copy->image.get(), F_DUPFD_CLOEXEC, 0);
  }
  // Written once the copy is shared: the sessions waiting for it go on
  // meanwhile. The copy read in this command stays the memfd.
  if (to_store && image >= 0) cache_->store(*to_store, image);
  return image;
}

size_t InflatedFiles::count(bool cached) const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [key, copy] : copies_) {
    std::lock_guard copying(copy->mutex);
    n += copy->image && copy->from_cache == cached ? 1 : 0;
  }
  return n;
}

size_t InflatedFiles::inflated() const { return count(false); }
size_t InflatedFiles::from_cache() const { return count(true); }

int InflatedFiles::open_inflated(const std::string& path) {
  const format::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  return fd ? open_inflated(fd.get()) : -1;
}

}  // namespace memloupe::symbolize
