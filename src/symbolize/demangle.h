// C++ and Rust symbol demangling for the symbolizer.
#pragma once

#include <string>

namespace memloupe::symbolize {

// The demangled form of an Itanium-ABI name ("_ZN2ns1fEi" -> "ns::f(int)") or
// of a Rust one, legacy ("_ZN3foo17h05af221e174051e9E" -> "foo", the hash
// dropped) or v0 ("_RNvCs15kBYyAo9fc_7mycrate7example" -> "mycrate::example");
// any other name (C functions, already demangled names) is returned unchanged.
std::string demangle(const char* name);

}  // namespace memloupe::symbolize
