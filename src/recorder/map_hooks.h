// Mapped memory's hooks (map_hooks.cc): what they need set up.
#pragma once

namespace memloupe::recorder {

// From the library's constructor (where dl_iterate_phdr is safe): finds the
// object that provides the real malloc, whose own mmap calls are not recorded.
// Until then, mmap-family calls pass through unrecorded.
void note_allocator_module() noexcept;

}  // namespace memloupe::recorder
