#include "symbolize/own_module.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include <string>

namespace memloupe::symbolize {
namespace {

struct Search {
  std::string_view prefix;
  std::string path;
};

int find_by_name(dl_phdr_info* info, size_t, void* data) {
  auto& search = *static_cast<Search*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;  // the executable
  const std::string_view path = info->dlpi_name;
  const size_t slash = path.rfind('/');
  if (!path.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with(search.prefix)) return 0;
  search.path = path;
  return 1;
}

// The file's build-id note, read as the recorder reads it from memory (the
// same note: the loaded segments are the file's).
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

}  // namespace

std::optional<Module> own_loaded_module(std::string_view file_name_prefix) {
  Search search{file_name_prefix, {}};
  dl_iterate_phdr(find_by_name, &search);
  if (search.path.empty()) return std::nullopt;
  Module m;
  m.build_id = file_build_id(search.path);
  m.path = std::move(search.path);
  return m;
}

}  // namespace memloupe::symbolize
