// The program the launcher tests run under `memloupe run`.
//
//   launcher_testprog sites            allocate at the known sites of sites.cc
//   launcher_testprog exit N           exit with status N
//   launcher_testprog raise SIG        kill itself with signal SIG
//   launcher_testprog wait FILE        create FILE, then wait for a signal
//   launcher_testprog cat              copy stdin to stdout, then print "bytes N" on stderr
//   launcher_testprog fork             fork a child that allocates at the sites, wait for it
//   launcher_testprog env NAME...      print NAME=value (or NAME unset) for each, on stdout
//   launcher_testprog exec             allocate at the sites, then exec itself with "sites"
//   launcher_testprog count-sigint FILE  create FILE, wait for SIGINT, exit with the number
//                                      of SIGINTs received in the next 300 ms
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sites.h"

namespace {

volatile sig_atomic_t g_sigints = 0;

// Sizes the end-to-end tests look for in the trace.
constexpr std::size_t kWidgets = 1000;  // build_widgets: 16000 bytes
constexpr std::size_t kCBytes = 777;    // c_allocate

void allocate_at_sites() {
  memloupe_testprog::Capture a = memloupe_testprog::build_widgets(kWidgets);
  memloupe_testprog::Capture b;
  memloupe_testprog::c_allocate(kCBytes, &b);
  ::operator delete(a.block);
  ::operator delete(b.block);
}

int usage() {
  std::fprintf(stderr, "usage: launcher_testprog sites|exit N|raise SIG|wait FILE|cat|fork|exec|count-sigint FILE|env NAME...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  if (mode == "sites") {
    allocate_at_sites();
    return 0;
  }
  if (mode == "exit" && argc == 3) {
    allocate_at_sites();
    return std::atoi(argv[2]);
  }
  if (mode == "raise" && argc == 3) {
    allocate_at_sites();
    raise(std::atoi(argv[2]));
    return 0;
  }
  if (mode == "wait" && argc == 3) {
    allocate_at_sites();
    const int fd = open(argv[2], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return 2;
    close(fd);
    for (;;) pause();
  }
  if (mode == "cat") {
    char buf[4096];
    long total = 0;
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0) {
      if (write(1, buf, static_cast<size_t>(n)) != n) return 1;
      total += n;
    }
    std::fprintf(stderr, "bytes %ld\n", total);
    return 0;
  }
  if (mode == "fork") {
    const pid_t pid = fork();
    if (pid == 0) {
      allocate_at_sites();
      return 0;  // exit normally, so the child's trace is complete
    }
    int status = 0;
    waitpid(pid, &status, 0);
    allocate_at_sites();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (mode == "count-sigint" && argc == 3) {
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_sigints = g_sigints + 1; };
    sigaction(SIGINT, &sa, nullptr);
    const int fd = open(argv[2], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return 100;
    close(fd);
    while (g_sigints == 0) pause();
    usleep(300'000);
    return g_sigints;
  }
  if (mode == "exec") {
    allocate_at_sites();
    char self[] = "/proc/self/exe";
    char sites[] = "sites";
    char* args[] = {argv[0], sites, nullptr};
    execv(self, args);
    return 2;
  }
  if (mode == "env") {
    for (int i = 2; i < argc; ++i) {
      const char* value = std::getenv(argv[i]);
      if (value != nullptr) {
        std::printf("%s=%s\n", argv[i], value);
      } else {
        std::printf("%s unset\n", argv[i]);
      }
    }
    return 0;
  }
  return usage();
}
