#include "symbolize/demangle.h"

#include <cxxabi.h>
#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>
#include <optional>

namespace memloupe::symbolize {
namespace {

using Owned = std::unique_ptr<char, decltype(&std::free)>;

// libiberty's Rust demangler (Debian libiberty-dev), both schemes: v0
// ("_R...") and legacy (Itanium-shaped "_ZN...17h<hash>E"). Without
// DMGL_VERBOSE it leaves out the legacy hash element and v0's crate
// disambiguators, which the views do not want. Nothing when `name` is not a
// Rust symbol (a C++ "_ZN" name without the hash element, say).
std::optional<std::string> rust(const char* name) {
  Owned out(rust_demangle(name, DMGL_PARAMS), &std::free);
  if (!out) return std::nullopt;
  return std::string(out.get());
}

}  // namespace

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (name[0] != '_') return name;
  // v0 Rust names start "_R"; legacy ones look like C++'s, so Rust is tried
  // first (it accepts only names that end in a Rust hash element).
  if (name[1] == 'R' || name[1] == 'Z') {
    if (auto r = rust(name)) return *r;
  }
  // Only mangled names go to the demangler: a plain C name like "f" would
  // otherwise be read as a mangled type name and come back as "float".
  if (name[1] != 'Z') return name;
  int status = 0;
  Owned out(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

}  // namespace memloupe::symbolize
