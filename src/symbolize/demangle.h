// C++ symbol demangling for the symbolizer.
#pragma once

#include <string>

namespace memloupe::symbolize {

// The demangled form of an Itanium-ABI name ("_ZN2ns1fEi" -> "ns::f(int)");
// any other name (C functions, already demangled names) is returned unchanged.
std::string demangle(const char* name);

}  // namespace memloupe::symbolize
