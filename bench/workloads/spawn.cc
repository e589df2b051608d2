// bench_spawn RESULT_FILE PROGRAM ARGS...: runs the program and writes what it cost to
// RESULT_FILE as one line of `key=value` pairs (wall_ns, user_us, sys_us, maxrss_kib,
// exit, and end_realtime_ns: CLOCK_REALTIME when it was reaped, which the suite sets
// against a trace's start_wall_ns + duration_ns for the wait after the trace's end). The suite runs every measured command through it because ru_maxrss survives
// exec: a child forked from the suite's Python interpreter would report the
// interpreter's resident set (~20 MiB) as its own peak. This program is small, so the
// peak that the target inherits from the fork is about a megabyte.
// The program's stdin/stdout/stderr are this process's own.
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace {

long long now_ns(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long micros(const timeval& tv) { return tv.tv_sec * 1000000LL + tv.tv_usec; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RESULT_FILE PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  long long start = now_ns();
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("bench_spawn: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    std::fprintf(stderr, "bench_spawn: cannot run %s: %s\n", argv[2], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      std::perror("bench_spawn: wait4");
      return 2;
    }
  }
  long long wall = now_ns() - start;
  long long end_realtime = now_ns(CLOCK_REALTIME);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::perror("bench_spawn: result file");
    return 2;
  }
  std::fprintf(out, "wall_ns=%lld user_us=%lld sys_us=%lld maxrss_kib=%ld exit=%d end_realtime_ns=%lld\n",
               wall, micros(usage.ru_utime), micros(usage.ru_stime), usage.ru_maxrss, code, end_realtime);
  std::fclose(out);
  return code < 0 ? 128 - code : code;
}
