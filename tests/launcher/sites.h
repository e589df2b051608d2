// Allocation sites at known source lines, for symbolisation tests.
//
// Compiled with -O1 -g into the test program and the tests, so that the
// addresses they capture are real return addresses of real optimised code.
// Each call the tests check is marked in sites.cc with a comment "// @NAME";
// the tests find the expected line numbers by looking for those markers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe_testprog {

struct Widget {
  int parts[4];
};

// A block and the return address of the call that allocated it: an address
// inside the function that called leaf_allocate, as a backtrace holds it.
struct Capture {
  void* block = nullptr;
  uintptr_t return_address = 0;
};

// Calls ::operator new(bytes) (@leaf-call).
Capture leaf_allocate(std::size_t bytes);

// Calls Builder<Widget>::make(n) (@outer-call), which is always inlined and
// calls leaf_allocate (@inlined-call). Returns leaf_allocate's capture.
Capture build_widgets(std::size_t n);

// A C-linkage function calling leaf_allocate (@c-call): a name that needs no
// demangling.
extern "C" void c_allocate(std::size_t bytes, Capture* out);

}  // namespace memloupe_testprog
