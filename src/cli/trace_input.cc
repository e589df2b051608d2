#include "cli/trace_input.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/commands.h"

namespace memloupe::cli {
void complain(const std::string& path, const std::string& message) {
  std::cout.flush();  // what was printed so far comes first
  const std::string prefix = path + ": ";
  std::cerr << "memloupe: " << (message.rfind(prefix, 0) == 0 ? "" : prefix) << message << '\n';
}

std::unique_ptr<reader::Reader> open_trace(const std::string& path, int& exit_code) {
  // access() gives the plain reason (errno) for the common "no such file" case.
  if (::access(path.c_str(), R_OK) != 0) {
    std::cerr << "memloupe: cannot open '" << path << "': " << std::strerror(errno) << '\n';
    exit_code = kNoInput;
    return nullptr;
  }
  auto opened = reader::Reader::open(path);
  if (!opened) {
    const Error& e = opened.error();
    // Errors without a file position are about the file itself (a directory, mmap).
    exit_code = e.offset == Error::kNoOffset ? kNoInput : kNotATrace;
    complain(path, e.message);
    return nullptr;
  }
  exit_code = kOk;
  return std::move(opened.value());
}

int report_damage(const reader::Reader& reader, const std::string& path) {
  if (!reader.error()) return kOk;
  complain(path, reader.error()->message);
  return kDamaged;
}

}  // namespace memloupe::cli
