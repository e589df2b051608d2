#include "symbolize/elf_file.h"

#include <elfutils/libdwelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "symbolize/debug_search.h"
#include "symbolize/file_build_id.h"
#include "symbolize/inflated_files.h"

namespace memloupe::symbolize {
namespace {

// Whether libdw asks find_debuginfo for the module's own separate debug
// file: it names the module's file and that file's .gnu_debuglink. A dwz file
// that DWARF links to (.gnu_debugaltlink) is asked for with the link's name.
bool asks_for_own_debug_file(Dwfl_Module* module, const char* file, const char* debuglink) {
  const char* main_file = nullptr;
  dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file, nullptr);
  if (file == nullptr || main_file == nullptr || std::strcmp(file, main_file) != 0) return false;
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  GElf_Word crc = 0;
  const char* own = elf != nullptr ? dwelf_elf_gnu_debuglink(elf, &crc) : nullptr;
  return own == nullptr ? debuglink == nullptr : debuglink != nullptr && std::strcmp(own, debuglink) == 0;
}

// The separate debug file, read from its inflated copy when it has compressed
// sections (inflated_files.h; the module's userdata is the session's
// InflatedFiles, if any). The copy stands for the file elfutils' standard
// search finds first, by build-id, and only when that file's own build-id is
// the module's (as elfutils checks); everything else is left to that search,
// as is the lookup of a dwz file. Not by wrapping the search: it keeps the
// file it opens for the module, whatever descriptor the callback returns.
// With no debuginfod server configured, that search is run only when a file
// it would open is there (debug_search.h: else it finds nothing, and would
// load libdebuginfod to be told so).
int find_debuginfo(Dwfl_Module* module, void** userdata, const char* name, Dwarf_Addr base, const char* file,
                   const char* debuglink, GElf_Word crc, char** debuginfo_file) {
  const bool own = asks_for_own_debug_file(module, file, debuglink);
  const unsigned char* bits = nullptr;
  GElf_Addr where = 0;
  const int n = own ? dwfl_module_build_id(module, &bits, &where) : 0;
  const std::span<const uint8_t> id(bits, static_cast<size_t>(std::max(n, 0)));
  if (auto* inflated = static_cast<InflatedFiles*>(*userdata); inflated != nullptr && n >= 2) {
    const std::string path = debug_file_path(kSystemDebugRoot, id);
    if (std::ranges::equal(file_build_id(path), id)) {
      if (const int image = inflated->open_inflated(path); image >= 0) {
        // Named as elfutils names what it finds (the real path: what a
        // debug file links to, .gnu_debugaltlink, is relative to it).
        char* real = realpath(path.c_str(), nullptr);
        *debuginfo_file = real != nullptr ? real : strdup(path.c_str());
        return image;
      }
    }
  }
  if (own && !debuginfod_configured() && !local_debug_file_may_exist(file, id, debuglink)) return -1;
  return dwfl_standard_find_debuginfo(module, userdata, name, base, file, debuglink, crc, debuginfo_file);
}

// Every module gets its own session with the ELF placed at bias 0, so Dwfl
// addresses are ELF virtual addresses: modules loaded at overlapping ranges at
// different times never meet in one address space, and one session serves
// every load of a file whatever its load bias.
const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,  // elfutils' default ":.debug:/usr/lib/debug"
};

std::string libdw_error() {
  const char* msg = dwfl_errmsg(-1);
  return msg ? msg : "unknown libdw error";
}

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

struct Session {
  DwflPtr dwfl{nullptr, dwfl_end};
  Dwfl_Module* module = nullptr;
  std::vector<uint8_t> build_id;
};

// `file` in a session of its own; read from its inflated copy if it has
// compressed sections and `inflated` is given, and so is its separate debug file.
Expected<Session> report(const std::string& file, InflatedFiles* inflated) {
  Session s;
  s.dwfl.reset(dwfl_begin(&kCallbacks));
  if (!s.dwfl) return Error{"libdw: " + libdw_error()};
  dwfl_report_begin(s.dwfl.get());
  const int image = inflated != nullptr ? inflated->open_inflated(file) : -1;
  s.module = dwfl_report_elf(s.dwfl.get(), file.c_str(), file.c_str(), image, 0, true);  // takes `image`
  if (s.module == nullptr) {
    if (image >= 0) close(image);
    return Error{file + ": " + libdw_error()};
  }
  void** userdata = nullptr;
  dwfl_module_info(s.module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  *userdata = inflated;  // for find_debuginfo
  if (dwfl_report_end(s.dwfl.get(), nullptr, nullptr) != 0) {
    return Error{file + ": " + libdw_error()};
  }
  const unsigned char* bits = nullptr;
  GElf_Addr where = 0;
  const int n = dwfl_module_build_id(s.module, &bits, &where);
  if (n > 0) s.build_id.assign(bits, bits + n);
  return s;
}

}  // namespace

std::string hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

Expected<std::unique_ptr<ElfFile>> ElfFile::open(const std::string& path,
                                                 std::span<const uint8_t> build_id,
                                                 const std::string& debug_root,
                                                 InflatedFiles* inflated) {
  const auto matches = [&](const Session& s) {
    return build_id.empty() || std::ranges::equal(s.build_id, build_id);
  };
  std::string problem;
  if (is_file(path)) {
    Expected<Session> s = report(path, inflated);
    if (s && matches(*s)) {
      return std::unique_ptr<ElfFile>(new ElfFile(
          std::move(s->dwfl), s->module, path));
    }
    problem = s ? path + " has build-id " + (s->build_id.empty() ? "(none)" : hex(s->build_id)) +
                      ", the trace recorded " + hex(build_id)
                : s.error().message;
  } else {
    problem = path + ": no such file";
  }

  if (build_id.size() >= 2) {
    const std::string debug = debug_file_path(debug_root, build_id);
    if (is_file(debug)) {
      Expected<Session> s = report(debug, inflated);
      if (s && matches(*s)) {
        return std::unique_ptr<ElfFile>(new ElfFile(
            std::move(s->dwfl), s->module, debug));
      }
    }
  }
  return Error{problem};
}

}  // namespace memloupe::symbolize
