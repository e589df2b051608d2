// Process-level edge cases for the recorder's end-to-end tests: fork, exec,
// signals, _exit, abort, exit() from a thread, longjmp, dlopen, and a program
// that waits to be killed. Each mode's output and exit status must be the same
// with and without the recorder.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void* volatile sink;

static void churn(int n) {
  for (int i = 0; i < n; ++i) free(sink = malloc(64 + i % 512));
}

static int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {}
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int do_fork(void) {
  churn(1000);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    churn(1000);
    printf("child ok\n");
    exit(0);
  }
  churn(1000);
  printf("parent ok, child %d\n", wait_child(pid));
  return 0;
}

// A child made by the clone system call itself, as a program's own fork
// wrapper might: glibc's fork handlers (the recorder's among them) do not run,
// so the recorder must tell the child from the traced process by itself (its
// alive page, and the lean gate in it, read zero there) and let it run
// untraced, however many calls it makes (more than the staging ring holds).
static int do_raw_fork(void) {
  churn(1000);
  fflush(stdout);
  const pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
  if (pid == 0) {
    churn(40000);
    static const char ok[] = "raw child ok\n";
    if (write(1, ok, sizeof ok - 1) < 0) _exit(1);
    _exit(0);
  }
  churn(1000);
  printf("parent ok, child %d\n", wait_child(pid));
  return 0;
}

// Forks while another thread reallocates nonstop, so that some forks happen with
// the recorder's locks (the realloc lock in --all mode) held by that thread: the
// child, which inherits them with nobody to release them, must still run.
static volatile int g_stop;

static void* reallocate_nonstop(void* arg) {
  (void)arg;
  void* p = NULL;
  for (unsigned i = 0; !g_stop; ++i) sink = p = realloc(p, 16 + (i * 2654435761u) % 4096);
  free(p);
  return NULL;
}

static int do_fork_while_reallocating(void) {
  pthread_t t;
  pthread_create(&t, NULL, reallocate_nonstop, NULL);
  int failed = 0;
  for (int i = 0; i < 40; ++i) {
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      churn(200);
      sink = realloc(malloc(10), 5000);
      _exit(0);
    }
    failed += wait_child(pid) != 0;
    churn(100);
  }
  g_stop = 1;
  pthread_join(t, NULL);
  printf("forks done, %d failed\n", failed);
  return 0;
}

static int do_fork_exec(const char* self) {
  churn(1000);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, "child", (char*)NULL);
    _exit(127);
  }
  printf("parent ok, child %d\n", wait_child(pid));
  return 0;
}

// Children run with the environment the process started with (from
// /proc/self/environ), as bash runs its commands: bash keeps its own variables
// (its own setenv too), so the session the recorder sets at start never reaches
// them.
static int do_spawn_with_first_environment(const char* self) {
  churn(1000);
  fflush(stdout);
  static char block[1 << 16];
  static char* envp[512];
  FILE* f = fopen("/proc/self/environ", "r");
  if (f == NULL) return 1;
  const size_t n = fread(block, 1, sizeof block - 1, f);
  fclose(f);
  size_t count = 0;
  for (size_t at = 0; at < n && count + 1 < sizeof envp / sizeof *envp; at += strlen(block + at) + 1) {
    envp[count++] = block + at;
  }
  envp[count] = NULL;
  char* args[] = {(char*)self, "child", NULL};
  pid_t pid;
  if (posix_spawn(&pid, self, NULL, NULL, args, envp) != 0) return 1;
  const int first = wait_child(pid);
  pid = fork();
  if (pid == 0) {
    execve(self, args, envp);
    _exit(127);
  }
  const int second = wait_child(pid);
  churn(1000);
  printf("parent ok, children %d %d\n", first, second);
  return 0;
}

// A child that execs by the system call itself (no hook sees it) with an
// environment of the recorder's variables alone, as `env -i LD_PRELOAD=...
// MEMLOUPE_OUTPUT=... program` would make: nothing tells the new image that a
// traced process is writing that file.
static int do_exec_raw_with_recorder_variables(const char* self) {
  churn(1000);
  fflush(stdout);
  static char entries[3][4096];
  char* envp[4] = {NULL};
  const char* names[] = {"LD_PRELOAD", "MEMLOUPE_MODE", "MEMLOUPE_OUTPUT"};
  size_t count = 0;
  for (size_t i = 0; i < 3; ++i) {
    const char* value = getenv(names[i]);
    if (value == NULL) continue;
    snprintf(entries[count], sizeof entries[count], "%s=%s", names[i], value);
    envp[count] = entries[count];
    ++count;
  }
  char* args[] = {(char*)self, "child", NULL};
  const pid_t pid = fork();
  if (pid == 0) {
    syscall(SYS_execve, self, args, envp);
    _exit(127);
  }
  const int status = wait_child(pid);
  churn(1000);
  printf("parent ok, child %d\n", status);
  return 0;
}

static int do_exec_self(const char* self) {
  churn(1000);
  printf("before exec\n");
  fflush(stdout);
  execl(self, self, "child", (char*)NULL);
  return 127;
}

static volatile sig_atomic_t g_handled;
static void on_usr1(int sig) {
  (void)sig;
  free(sink = malloc(1234));  // not async-signal-safe in general; fine here: raise() below
  g_handled = 1;
}
static int do_signal(void) {
  signal(SIGUSR1, on_usr1);
  churn(100);
  raise(SIGUSR1);
  churn(100);
  printf("handled %d\n", (int)g_handled);
  return 0;
}

// Signals from another thread land anywhere in the main thread's malloc and
// free, the recorder's slow paths included (between its read of the thread's
// countdown and its write, say), and their handler calls the hooked functions:
// malloc(SIZE_MAX) and free(NULL), which glibc answers without its heap or its
// locks (a real allocation there could deadlock on the arena lock main holds). The sender pauses between signals (nonstop kills kept the main thread
// in the kernel). How many land depends on the scheduling (on one CPU, about
// one per scheduler tick), so main makes a fixed number of calls and the
// output does not count them.
static volatile int g_storm_stop;
static volatile size_t g_storm_size = SIZE_MAX;  // volatile: gcc rejects the constant size
static void on_storm(int sig) {
  (void)sig;
  const int saved = errno;
  sink = malloc(g_storm_size);
  free(NULL);
  errno = saved;
}
static void* storm_sender(void* main_thread) {
  while (!g_storm_stop) {
    pthread_kill(*(pthread_t*)main_thread, SIGUSR2);
    for (volatile int spin = 0; spin < 1000; ++spin) {}
  }
  return NULL;
}
static int do_signal_storm(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_storm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR2, &sa, NULL);
  pthread_t self = pthread_self(), sender;
  pthread_create(&sender, NULL, storm_sender, &self);
  for (int i = 0; i < 200000; ++i) free(sink = malloc(64 + i % 512));
  g_storm_stop = 1;
  pthread_join(sender, NULL);
  printf("storm done\n");
  return 0;
}

static int do_underscore_exit(void) {
  churn(1000);
  printf("exiting\n");
  fflush(stdout);
  _exit(7);
}

static int do_abort(void) {
  churn(1000);
  printf("aborting\n");
  fflush(stdout);
  abort();
}

static void* exit_from_thread(void* arg) {
  (void)arg;
  churn(500);
  printf("thread exits\n");
  exit(5);
}
static int do_exit_thread(void) {
  churn(500);
  pthread_t t;
  pthread_create(&t, NULL, exit_from_thread, NULL);
  pthread_join(t, NULL);  // never returns: the thread ends the process
  return 0;
}

static jmp_buf g_jump;
static void* g_blocks[64];
static void descend(int depth) {
  g_blocks[depth] = malloc(100 + depth);
  if (depth >= 63) longjmp(g_jump, 1);
  if (depth < 63) descend(depth + 1);
}
static int do_longjmp(void) {
  volatile int rounds = 0;
  for (volatile int r = 0; r < 20; ++r) {
    if (setjmp(g_jump) == 0) descend(0);
    for (int i = 0; i < 64; ++i) free(g_blocks[i]);
    ++rounds;
  }
  printf("longjmp rounds %d\n", rounds);
  return 0;
}

static int do_dlopen(const char* plugin) {
  for (int round = 0; round < 2; ++round) {
    void* h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("dlopen failed\n");
      return 1;
    }
    void* (*allocate)(size_t) = (void* (*)(size_t))dlsym(h, "plugin_allocate");
    for (int i = 0; i < 100; ++i) free(allocate(1000));
    dlclose(h);
  }
  printf("dlopen rounds 2\n");
  return 0;
}

// Like a daemon: closes every descriptor above stderr, then opens a file of its
// own on the numbers a library might have been using.
static int do_close_all(const char* victim) {
  churn(1000);
  for (int fd = 3; fd < 4096; ++fd) close(fd);
  FILE* f = fopen(victim, "w");
  if (!f) return 1;
  for (int fd = 3; fd < 4096; ++fd) dup2(fileno(f), fd);
  churn(100000);
  fputs("victim ok\n", f);
  fclose(f);
  printf("closed all\n");
  return 0;
}

// Allocates steadily until killed.
static int do_sleep(void) {
  churn(1000);
  printf("ready\n");
  fflush(stdout);
  for (int i = 0; i < 6000; ++i) {  // a minute at most
    churn(100);
    usleep(10 * 1000);
  }
  return 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "child")) { churn(100); printf("exec child ok\n"); return 0; }
  if (!strcmp(mode, "fork")) return do_fork();
  if (!strcmp(mode, "raw_fork")) return do_raw_fork();
  if (!strcmp(mode, "fork_exec")) return do_fork_exec(argv[0]);
  if (!strcmp(mode, "spawn_with_first_environment")) return do_spawn_with_first_environment(argv[0]);
  if (!strcmp(mode, "exec_raw_with_recorder_variables")) return do_exec_raw_with_recorder_variables(argv[0]);
  if (!strcmp(mode, "fork_reallocating")) return do_fork_while_reallocating();
  if (!strcmp(mode, "exec_self")) return do_exec_self(argv[0]);
  if (!strcmp(mode, "signal")) return do_signal();
  if (!strcmp(mode, "signal_storm")) return do_signal_storm();
  if (!strcmp(mode, "_exit")) return do_underscore_exit();
  if (!strcmp(mode, "abort")) return do_abort();
  if (!strcmp(mode, "exit_thread")) return do_exit_thread();
  if (!strcmp(mode, "longjmp")) return do_longjmp();
  if (!strcmp(mode, "dlopen") && argc > 2) return do_dlopen(argv[2]);
  if (!strcmp(mode, "sleep")) return do_sleep();
  if (!strcmp(mode, "close_all") && argc > 2) return do_close_all(argv[2]);
  return 2;
}
