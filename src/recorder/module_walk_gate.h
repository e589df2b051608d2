// The recorder's walks of the loaded modules, gated for fork.
//
// glibc's dl_iterate_phdr holds the loader's dl_load_write_lock while it
// walks, and glibc (2.36) does not reset that lock in a fork child: a child
// forked while another thread of the parent was inside a walk waits forever
// at its own first walk (the recorder's new session with follow-fork; the
// program's, e.g. a C++ throw's unwinder). The recorder walks from inside the
// hooks (once a millisecond in --all mode: sync_modules), so its walks pass a
// gate: fork's prepare handler closes it and waits for the walks under way to
// end, the parent's and the child's handlers open it again; a walk that finds
// it closed is skipped (the next check walks). docs/RECORDER.md, "Children:
// fork and exec".
#pragma once

#include <link.h>

#include <cstddef>

namespace memloupe::recorder {

// dl_iterate_phdr(callback, data) unless a fork is under way; false if skipped.
bool gated_module_walk(int (*callback)(dl_phdr_info*, size_t, void*), void* data) noexcept;

// pthread_atfork's prepare handler: closes the gate and waits (at most 100 ms)
// for the walks under way to end.
void close_module_walks_for_fork() noexcept;
// Its parent and child handlers.
void open_module_walks_after_fork(bool in_child) noexcept;

}  // namespace memloupe::recorder
