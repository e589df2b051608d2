// libc's separate debug file (libc6-dbg's; its sections are compressed) and
// two of libc's addresses to look up in it, for the tests of the inflated
// copies (inflated_files_test.cc, inflated_cache_test.cc).
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "symbolize/elf_file.h"
#include "symbolize/loaded_modules.h"

namespace memloupe::symbolize {

struct LibcDebug {
  Module module;       // libc as it is loaded
  std::string debug;   // its debug file, by build-id
  uint64_t pc = 0;     // a "return address" in malloc
  uint64_t global = 0; // _IO_2_1_stdout_'s ELF address
};

// None when libc or its debug file is not found.
inline std::optional<LibcDebug> libc_debug() {
  // glibc's own names: a sanitizer's malloc is in the test program.
  void* malloc_address = dlsym(RTLD_DEFAULT, "__libc_malloc");
  void* stdout_file = dlsym(RTLD_DEFAULT, "_IO_2_1_stdout_");
  if (malloc_address == nullptr || stdout_file == nullptr) return std::nullopt;
  auto module = loaded_module_at(reinterpret_cast<uint64_t>(malloc_address));
  if (!module) return std::nullopt;
  const std::string id = hex(module->build_id);
  if (id.size() < 2) return std::nullopt;
  LibcDebug libc{.module = *module,
                 .debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug",
                 .pc = reinterpret_cast<uint64_t>(malloc_address) + 1,
                 .global = reinterpret_cast<uint64_t>(stdout_file) - module->load_bias};
  if (!std::filesystem::exists(libc.debug)) return std::nullopt;
  return libc;
}

}  // namespace memloupe::symbolize
