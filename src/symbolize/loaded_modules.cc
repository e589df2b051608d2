#include "symbolize/loaded_modules.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>

namespace memloupe::symbolize {
namespace {

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::vector<uint8_t> build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::equal(name, name + 4, reinterpret_cast<const uint8_t*>("GNU"))) {
        return {desc, desc + note->n_descsz};
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

}  // namespace

std::vector<Module> loaded_modules() {
  std::vector<Module> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& modules = *static_cast<std::vector<Module>*>(data);
        Module m;
        m.path = info->dlpi_name[0] ? info->dlpi_name : self_exe();
        m.build_id = build_id_of(info);
        m.load_bias = info->dlpi_addr;
        m.start = UINT64_MAX;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          m.start = std::min<uint64_t>(m.start, info->dlpi_addr + ph.p_vaddr);
          m.end = std::max<uint64_t>(m.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if (m.end > m.start) modules.push_back(std::move(m));
        return 0;
      },
      &out);
  return out;
}

std::optional<Module> loaded_module_at(uint64_t address) {
  for (Module& m : loaded_modules()) {
    if (address >= m.start && address < m.end) return std::move(m);
  }
  return std::nullopt;
}

std::optional<Module> loaded_module_named(std::string_view file_name_prefix) {
  for (Module& m : loaded_modules()) {
    if (m.file_name_starts_with(file_name_prefix)) return std::move(m);
  }
  return std::nullopt;
}

}  // namespace memloupe::symbolize
