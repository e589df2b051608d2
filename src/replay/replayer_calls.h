// The allocator calls the replayer makes: each recorded function is called as
// itself (malloc as malloc, sized delete[] as sized delete[] with the block's
// size), so the allocator under test runs the path the program ran. The few
// exceptions are normalisations, listed in docs/REPLAY.md § Faithfulness.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/funcs.h"

namespace memloupe::replay {

// Returns the new block, or nullptr if the allocator refused (counted, then
// replayed on as a null pointer: its free is a no-op).
void* call_alloc(format::Func f, size_t size, size_t alignment);
void call_free(format::Func f, void* p, size_t size, size_t alignment);
void* call_realloc(void* p, size_t size);

// The touch rule: write the first byte of every 4 KiB page of the block and its
// last byte, as a program that fills what it allocates would make them resident.
void touch(void* p, size_t size);

}  // namespace memloupe::replay
