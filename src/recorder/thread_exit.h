// A thread's end in the trace: a pthread key whose destructor writes the
// thread's last name and its ThreadEnd, and gives its registry slot back.
#pragma once

#include "recorder/thread_state.h"

namespace memloupe::recorder {

// Creates the key, once per process (later calls do nothing).
void create_thread_exit_key() noexcept;
// Arms the key for the calling thread, whose slot is `slot`.
void watch_thread_exit(ThreadSlot* slot) noexcept;

}  // namespace memloupe::recorder
