// Attach mode: a library dlopen'ed into a running process interposes nothing
// (the program's calls were bound to libc's malloc long ago), so the hooks are
// reached by rewriting the callers' GOT entries — the JUMP_SLOT (PLT) and
// GLOB_DAT (-fno-plt, address taken) relocations of every loaded module that name
// a hooked function — and put back at detach (docs/ATTACH.md).
#pragma once

#include <cstddef>

namespace memloupe::recorder {

// A function the GOT entries of that name are pointed at.
struct GotHook {
  const char* name;
  void* hook;
};

// Installs `hooks` (a table that lives as long as the process) in every module
// loaded now except this library, the dynamic loader and the vDSO. Entries that
// already point at a hook are left alone, so calling it again after a dlopen
// patches only the new module. Returns the number of entries changed.
size_t got_patch_all(const GotHook* hooks, size_t count) noexcept;

// The same with the hooks last installed, if they have not been restored since
// (modules loaded while attached). Returns the number of entries changed.
size_t got_patch_new() noexcept;

// Points every entry that holds a hook back at what it held before (or, for a
// module loaded since whose old value was not kept, at the global definition).
// Returns the number of entries restored.
size_t got_restore_all() noexcept;

}  // namespace memloupe::recorder
