#include "recorder/exec_follow.h"

#include <cstdlib>

#include "recorder/sys.h"

namespace memloupe::recorder {

ImageRole image_role(const Config& c, uint32_t pid) noexcept {
  if (c.follow_fork) return ImageRole::ExecOfTraced;  // every image records, none overwrites
  if (!c.session_pid) return ImageRole::First;
  return *c.session_pid == pid ? ImageRole::ExecOfTraced : ImageRole::Untraced;
}

void prepare_environment_for_exec(const Config& c, uint32_t pid) noexcept {
  if (c.follow_fork) return;  // MEMLOUPE_OUTPUT stays: every descendant records
  if (!c.follow_exec) {
    ::unsetenv("MEMLOUPE_OUTPUT");
    return;
  }
  char digits[21];
  digits[format_u64(digits, pid)] = '\0';
  // setenv allocates: the caller (the constructor) has parked this thread's hooks.
  ::setenv("MEMLOUPE_SESSION_PID", digits, 1);
}

}  // namespace memloupe::recorder
