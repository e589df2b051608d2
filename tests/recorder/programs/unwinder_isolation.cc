// Whether the recorder changes which unwinder the program's C++ exceptions use.
// `symbols` prints which loaded object the global scope gives each unwinder
// symbol (libgcc_s's exception ABI, libunwind's own API); `exceptions` throws and
// catches in the ways that go through that ABI (plain, rethrown, nested, across
// threads, forced unwinding by pthread_exit, _Unwind_Backtrace) and prints what
// happened; `maps NAME` says whether a mapped file's name contains NAME.
// Every line must be the same natively and under the recorder.
#include <dlfcn.h>
#include <pthread.h>
#include <unwind.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// The file that defines `name` in the global scope, or "none".
std::string provider(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (p == nullptr) return "none";
  Dl_info info{};
  if (dladdr(p, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

int symbols() {
  for (const char* name :
       {"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow", "_Unwind_ForcedUnwind",
        "_Unwind_Backtrace", "_Unwind_GetIP", "_Unwind_DeleteException", "unw_backtrace",
        "_ULx86_64_init_local", "_ULx86_64_step", "_Ux86_64_getcontext", "_U_dyn_register"})
    std::printf("%s %s\n", name, provider(name).c_str());
  return 0;
}

bool g_loud = true;

struct Noisy {  // its destructor shows which frames the unwinder cleaned up
  const char* name;
  ~Noisy() {
    if (g_loud) std::printf("  ~%s\n", name);
  }
};

[[gnu::noinline]] void thrower(int depth, int value) {
  Noisy n{depth % 2 ? "odd" : "even"};
  std::vector<std::string> scratch(3, std::string(100, 'x'));  // heap in the unwound frames
  if (depth == 0) throw std::runtime_error("depth reached, value " + std::to_string(value));
  thrower(depth - 1, value);
  std::printf("not reached %zu\n", scratch.size());
}

[[gnu::noinline]] void rethrower() {
  try {
    thrower(2, 7);
  } catch (std::exception& e) {
    std::printf("  rethrowing: %s\n", e.what());
    throw;
  }
}

_Unwind_Reason_Code count_frame(_Unwind_Context*, void* arg) {
  ++*static_cast<int*>(arg);
  return _URC_NO_REASON;
}

[[gnu::noinline]] int frames_below(int depth) {
  if (depth > 0) return frames_below(depth - 1);  // a call: sibling calls are off
  int n = 0;
  _Unwind_Backtrace(count_frame, &n);
  return n;
}

void* exits_in_nested_frames(void*) {
  Noisy n{"thread frame"};
  pthread_exit(nullptr);  // forced unwinding: runs ~Noisy
}

int exceptions() {
  try {
    thrower(3, 1);
  } catch (const std::runtime_error& e) {
    std::printf("caught: %s\n", e.what());
  }
  try {
    rethrower();
  } catch (const std::exception& e) {
    std::printf("caught again: %s\n", e.what());
  }
  try {
    try {
      throw 42;
    } catch (int v) {
      std::printf("caught int %d\n", v);
      std::throw_with_nested(std::logic_error("outer"));
    }
  } catch (const std::logic_error& e) {
    std::printf("caught %s", e.what());
    try {
      std::rethrow_if_nested(e);
    } catch (int v) {
      std::printf(" nesting %d\n", v);
    }
  }
  std::exception_ptr from_thread;
  std::thread t([&] {
    try {
      thrower(4, 2);
    } catch (...) {
      from_thread = std::current_exception();
    }
  });
  t.join();
  try {
    std::rethrow_exception(from_thread);
  } catch (const std::exception& e) {
    std::printf("caught from a thread: %s\n", e.what());
  }
  pthread_t forced;
  pthread_create(&forced, nullptr, exits_in_nested_frames, nullptr);
  pthread_join(forced, nullptr);
  // Many throws: the recorder samples (and unwinds at) the exception allocations.
  long caught = 0;
  g_loud = false;
  for (int i = 0; i < 3000; ++i) {
    try {
      thrower(i % 6, i);
    } catch (const std::runtime_error& e) {
      caught += static_cast<long>(std::strlen(e.what()));
    }
  }
  std::printf("caught %ld bytes of messages\n", caught);
  std::printf("_Unwind_Backtrace: %d more frames 5 calls deeper\n", frames_below(5) - frames_below(0));
  return 0;
}

int maps(const char* name) {
  std::ifstream in("/proc/self/maps");
  for (std::string line; std::getline(in, line);)
    if (line.find(name) != std::string::npos) {
      std::printf("mapped\n");
      return 0;
    }
  std::printf("not mapped\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "symbols") return symbols();
  if (mode == "exceptions") return exceptions();
  if (mode == "maps" && argc > 2) return maps(argv[2]);
  std::fprintf(stderr, "usage: %s symbols | exceptions | maps NAME\n", argv[0]);
  return 2;
}
