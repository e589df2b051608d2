#include "symbolize/elf_file.h"

#include <sys/stat.h>

#include <algorithm>


namespace memloupe::symbolize {
namespace {

// Every module gets its own session with the ELF placed at bias 0, so Dwfl
// addresses are ELF virtual addresses: modules loaded at overlapping ranges at
// different times never meet in one address space, and one session serves
// every load of a file whatever its load bias.
const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
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

Expected<Session> report(const std::string& file) {
  Session s;
  s.dwfl.reset(dwfl_begin(&kCallbacks));
  if (!s.dwfl) return Error{"libdw: " + libdw_error()};
  dwfl_report_begin(s.dwfl.get());
  s.module = dwfl_report_elf(s.dwfl.get(), file.c_str(), file.c_str(), -1, 0, true);
  if (s.module == nullptr) return Error{file + ": " + libdw_error()};
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
                                                 const std::string& debug_root) {
  const auto matches = [&](const Session& s) {
    return build_id.empty() || std::ranges::equal(s.build_id, build_id);
  };
  std::string problem;
  if (is_file(path)) {
    Expected<Session> s = report(path);
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
    const std::string id = hex(build_id);
    const std::string debug = debug_root + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
    if (is_file(debug)) {
      Expected<Session> s = report(debug);
      if (s && matches(*s)) {
        return std::unique_ptr<ElfFile>(new ElfFile(
            std::move(s->dwfl), s->module, debug));
      }
    }
  }
  return Error{problem};
}

}  // namespace memloupe::symbolize
