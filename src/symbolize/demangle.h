// C++ and Rust symbol demangling for the symbolizer.
#pragma once

#include <string>

namespace memloupe::symbolize {

// The demangled form of an Itanium-ABI name ("_ZN2ns1fEi" -> "ns::f(int)") or
// of a Rust one, legacy ("_ZN3foo17h05af221e174051e9E" -> "foo", the hash
// dropped) or v0 ("_RNvCs15kBYyAo9fc_7mycrate7example" -> "mycrate::example");
// any other name (C functions, already demangled names) is returned unchanged.
std::string demangle(const char* name);

// A symbol-table name demangled when first asked for: `name` from `mangled`,
// which is then cleared (a module's table has thousands of names, libstdc++'s
// ~4,000, and a run asks for a few; demangling all of them up front was a
// quarter of a short `memloupe run`'s instructions). `mangled` points into the
// table, which must outlive it.
inline const std::string& demangle_once(const char*& mangled, std::string& name) {
  if (mangled != nullptr) {
    name = demangle(mangled);
    mangled = nullptr;
  }
  return name;
}

}  // namespace memloupe::symbolize
