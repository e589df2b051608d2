#include "recorder/exec_follow.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

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

namespace {

constexpr std::string_view kSessionVar = "MEMLOUPE_SESSION_PID=";
constexpr std::string_view kOutputVar = "MEMLOUPE_OUTPUT=";

bool is(const char* entry, std::string_view var) noexcept {
  return std::strncmp(entry, var.data(), var.size()) == 0;
}

}  // namespace

size_t exec_environment_room(char* const envp[]) noexcept {
  size_t n = 0;
  while (envp != nullptr && envp[n] != nullptr) ++n;
  return n + 2;  // the session's entry, if added, and the null
}

char* const* exec_environment(const Config& c, uint32_t session_pid, char* const envp[], char** room,
                              char* entry) noexcept {
  if (c.follow_fork || envp == nullptr) return envp;
  bool output = false;
  for (char* const* e = envp; *e != nullptr; ++e) output |= is(*e, kOutputVar);
  if (!output) return envp;  // not followed (env -i), or already without it
  size_t n = 0;
  if (!c.follow_exec) {
    for (char* const* e = envp; *e != nullptr; ++e) {
      if (!is(*e, kOutputVar)) room[n++] = *e;
    }
    room[n] = nullptr;
    return room;
  }
  const uint64_t pid = session_pid != 0 ? session_pid : c.session_pid.value_or(0);
  if (pid == 0) return envp;  // no session known: the exec'd image is the first
  std::memcpy(entry, kSessionVar.data(), kSessionVar.size());
  entry[kSessionVar.size() + format_u64(entry + kSessionVar.size(), pid)] = '\0';
  bool changed = false, placed = false;
  for (char* const* e = envp; *e != nullptr; ++e) {
    if (!is(*e, kSessionVar)) {
      room[n++] = *e;
    } else if (!placed) {  // the first is the one getenv finds
      changed |= std::strcmp(*e, entry) != 0;
      room[n++] = entry;
      placed = true;
    } else {
      changed = true;  // another, dropped
    }
  }
  if (!placed) {
    room[n++] = entry;
    changed = true;
  }
  room[n] = nullptr;
  return changed ? room : envp;
}

}  // namespace memloupe::recorder
