#include "cli/run_static_check.h"

#include <elf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace memloupe::cli {
namespace {

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Whether the ELF image in `file` has a PT_INTERP header; nothing if it is not
// a well-formed ELF file of a class we know.
template <class Ehdr, class Phdr>
std::optional<bool> has_interpreter(std::ifstream& file) {
  Ehdr eh;
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(&eh), sizeof eh)) return std::nullopt;
  if (eh.e_phentsize != sizeof(Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) return std::nullopt;
  file.seekg(static_cast<std::streamoff>(eh.e_phoff));
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Phdr ph;
    if (!file.read(reinterpret_cast<char*>(&ph), sizeof ph)) return std::nullopt;
    if (ph.p_type == PT_INTERP) return true;
  }
  return false;
}

// The interpreter path of a `#!` script, if `path` is one.
std::optional<std::string> shebang_interpreter(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string line;
  if (!std::getline(file, line) || !line.starts_with("#!")) return std::nullopt;
  std::istringstream words(line.substr(2));
  std::string interpreter;
  if (!(words >> interpreter)) return std::nullopt;
  return interpreter;
}

}  // namespace

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  const std::string dirs = env ? env : "/bin:/usr/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end == start ? "." : dirs.substr(start, end - start);
    const std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> static_executable(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char ident[EI_NIDENT] = {};
  if (!file.read(reinterpret_cast<char*>(ident), sizeof ident)) return std::nullopt;
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    if (ident[0] == '#' && ident[1] == '!') {
      const std::optional<std::string> interpreter = shebang_interpreter(path);
      if (interpreter && shebang_interpreter(*interpreter) == std::nullopt) return static_executable(*interpreter);
    }
    return std::nullopt;
  }
  std::optional<bool> interp;
  if (ident[EI_CLASS] == ELFCLASS64) interp = has_interpreter<Elf64_Ehdr, Elf64_Phdr>(file);
  if (ident[EI_CLASS] == ELFCLASS32) interp = has_interpreter<Elf32_Ehdr, Elf32_Phdr>(file);
  // ET_DYN without an interpreter is a shared library or a static-pie; a
  // library run as a program fails on its own, a static-pie is static.
  if (interp == false) return path;
  return std::nullopt;
}

}  // namespace memloupe::cli
