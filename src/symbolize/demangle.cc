#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace memloupe::symbolize {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  // Only mangled names go to the demangler: a plain C name like "f" would
  // otherwise be read as a mangled type name and come back as "float".
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

}  // namespace memloupe::symbolize
