// Hooks on process and thread events that end or annotate the trace: the exec
// family (and posix_spawn, whose environment they share a rule for), _exit/_Exit,
// abort, and pthread_setname_np.
//
// exec: the traced image is about to be replaced, so the trace is ended (TraceEnd
// with EndReason::Exec) and written out first. Ending it is irreversible, so it
// is done only when the exec will probably succeed (the file exists and is
// executable, searching PATH for the execvp forms); a failed exec after that
// leaves the program running untraced. A vfork child (another pid sharing our
// memory) execs without touching the parent's trace.
#include <pthread.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "recorder/event_path.h"
#include "recorder/exec_follow.h"
#include "recorder/real_funcs.h"
#include "recorder/record.h"
#include "recorder/recorder.h"
#include "recorder/session.h"

#define MEMLOUPE_HOOK extern "C" __attribute__((visibility("default")))

using namespace memloupe::recorder;
using memloupe::format::EndReason;

namespace {

void ensure_resolved() noexcept {
  if (real_funcs_resolved()) return;
  HooksParked parked(t_state);
  ensure_process_init();
}

bool is_session_process() noexcept { return static_cast<uint32_t>(::getpid()) == g_session.pid; }

void end_for(EndReason reason, bool wait_for_lock = true) noexcept {
  if (!tracking() || !is_session_process()) return;
  HooksParked parked(t_state);
  end_session(reason, wait_for_lock);
}

bool executable(const char* path) noexcept { return path && ::access(path, X_OK) == 0; }

// execvp's search: a name with a slash is a path; otherwise each PATH entry
// (empty = current directory) is tried.
bool found_in_path(const char* file) noexcept {
  if (file == nullptr || *file == '\0') return false;
  if (std::strchr(file, '/')) return executable(file);
  const char* dirs = ::getenv("PATH");
  if (dirs == nullptr) dirs = "/bin:/usr/bin";
  const size_t file_len = std::strlen(file);
  char candidate[PATH_MAX];
  for (const char* d = dirs;; ++d) {
    const char* end = std::strchr(d, ':');
    const size_t dir_len = end ? static_cast<size_t>(end - d) : std::strlen(d);
    if (dir_len + 1 + file_len < sizeof(candidate)) {
      std::memcpy(candidate, dir_len ? d : ".", dir_len ? dir_len : 1);
      const size_t at = dir_len ? dir_len : 1;
      candidate[at] = '/';
      std::memcpy(candidate + at + 1, file, file_len + 1);
      if (executable(candidate)) return true;
    }
    if (end == nullptr) return false;
    d = end;
  }
}

// Calls `exec` with `envp` as exec_environment() makes it (exec_follow.h), its
// copy on this stack: nothing is allocated, as a vfork child must not. An
// environment of more than kMaxCopied entries is passed on as it is (a copy
// would take more stack than a thread may have).
template <class Exec>
int with_exec_environment(char* const envp[], Exec exec) {
  constexpr size_t kMaxCopied = 4096;
  const size_t room = exec_environment_room(envp);
  if (room > kMaxCopied) return exec(envp);
  char** copy = static_cast<char**>(__builtin_alloca(room * sizeof(char*)));
  char entry[kSessionEntry];
  return exec(exec_environment(config(), g_session.pid, envp, copy, entry));
}

int exec_path(const char* path, char* const argv[], char* const envp[]) {
  ensure_resolved();
  if (executable(path)) end_for(EndReason::Exec);
  return with_exec_environment(envp, [&](char* const* e) { return g_real.execve(path, argv, e); });
}

int exec_search(const char* file, char* const argv[], char* const envp[]) {
  ensure_resolved();
  if (found_in_path(file)) end_for(EndReason::Exec);
  return with_exec_environment(envp, [&](char* const* e) { return g_real.execvpe(file, argv, e); });
}

// The execl forms: argv from the variadic list (up to and including the null).
template <class Exec>
int exec_list(const char* arg0, va_list ap, bool with_envp, Exec exec) {
  va_list count;
  va_copy(count, ap);
  size_t argc = 1;
  while (va_arg(count, char*) != nullptr) ++argc;
  va_end(count);
  char** argv = static_cast<char**>(__builtin_alloca((argc + 1) * sizeof(char*)));
  argv[0] = const_cast<char*>(arg0);
  for (size_t i = 1; i <= argc; ++i) argv[i] = va_arg(ap, char*);  // ends with the null
  char* const* envp = with_envp ? va_arg(ap, char* const*) : environ;
  return exec(argv, envp);
}

}  // namespace

MEMLOUPE_HOOK int execve(const char* path, char* const argv[], char* const envp[]) {
  return exec_path(path, argv, envp);
}
MEMLOUPE_HOOK int execv(const char* path, char* const argv[]) { return exec_path(path, argv, environ); }
MEMLOUPE_HOOK int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return exec_search(file, argv, envp);
}
MEMLOUPE_HOOK int execvp(const char* file, char* const argv[]) {
  return exec_search(file, argv, environ);
}

MEMLOUPE_HOOK int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  const int rc = exec_list(arg, ap, false, [path](char** argv, char* const* envp) {
    return exec_path(path, argv, envp);
  });
  va_end(ap);
  return rc;
}
MEMLOUPE_HOOK int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  const int rc = exec_list(arg, ap, true, [path](char** argv, char* const* envp) {
    return exec_path(path, argv, envp);
  });
  va_end(ap);
  return rc;
}
MEMLOUPE_HOOK int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  const int rc = exec_list(arg, ap, false, [file](char** argv, char* const* envp) {
    return exec_search(file, argv, envp);
  });
  va_end(ap);
  return rc;
}

MEMLOUPE_HOOK int fexecve(int fd, char* const argv[], char* const envp[]) {
  ensure_resolved();
  end_for(EndReason::Exec);
  return with_exec_environment(envp, [&](char* const* e) { return g_real.fexecve(fd, argv, e); });
}

MEMLOUPE_HOOK int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                           int flags) {
  ensure_resolved();
  end_for(EndReason::Exec);
  return with_exec_environment(envp,
                               [&](char* const* e) { return g_real.execveat(dirfd, path, argv, e, flags); });
}

// posix_spawn execs in its child with glibc's own execve, not the hooked one:
// its environment is given the session here (the trace goes on: the spawned
// program is another process). The copy outlives the exec, which posix_spawn
// waits for.
MEMLOUPE_HOOK int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                              const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  ensure_resolved();
  return with_exec_environment(
      envp, [&](char* const* e) { return g_real.posix_spawn(pid, path, actions, attr, argv, e); });
}
MEMLOUPE_HOOK int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                               const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  ensure_resolved();
  return with_exec_environment(
      envp, [&](char* const* e) { return g_real.posix_spawnp(pid, file, actions, attr, argv, e); });
}

MEMLOUPE_HOOK void _exit(int status) {
  ensure_resolved();
  end_for(EndReason::Exit);
  if (g_real.exit_now) g_real.exit_now(status);
  ::syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

MEMLOUPE_HOOK void _Exit(int status) {
  ensure_resolved();
  end_for(EndReason::Exit);
  if (g_real.exit_now_c99) g_real.exit_now_c99(status);
  ::syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

MEMLOUPE_HOOK void abort() {
  ensure_resolved();
  // abort may run in a signal handler that interrupted this very thread inside
  // the recorder: wait for the trace lock only a bounded time here.
  end_for(EndReason::Signal, /*wait_for_lock=*/false);
  g_real.abort();
  __builtin_trap();
}

MEMLOUPE_HOOK int pthread_setname_np(pthread_t thread, const char* name) {
  ensure_resolved();
  const int rc = g_real.pthread_setname_np(thread, name);
  if (rc != 0 || !tracking()) return rc;
  const bool self = pthread_equal(thread, pthread_self());
  ThreadSlot* slot = self ? current_thread_slot() : g_threads.find(static_cast<uintptr_t>(thread));
  HooksParked parked(t_state);
  if (slot != nullptr && slot->announced) {
    const uint64_t now = trace_now_ns();
    LockGuard g(g_session.lock);
    if (tracking())
      trace_encoder().thread_name(memloupe::format::ThreadId{slot->thread_id}, now,
                                      {name, strnlen(name, 16)});
  }
  return rc;
}
