#include "attach/injector.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <thread>

#include "attach/elf_symbol.h"
#include "attach/proc_target.h"
#include "attach/remote_call.h"

namespace memloupe::attach {
namespace {

// memloupe_attach_begin/end's results (recorder/attach_entry.cc).
std::string attach_result_message(uint64_t code) {
  switch (code) {
    case 1: return "it is already being recorded (by memloupe run, or an attach that has not ended)";
    case 2: return "the recorder's configuration was too long";
    case 3: return "the recorder could not start its trace (see the program's stderr for why)";
    case 4: return "the recorder could not find its own hooks";
    default: return fmt::format("the recorder returned {}", code);
  }
}

bool in_any(const std::vector<Mapping>& maps, uint64_t address, bool (*what)(const std::string&)) {
  for (const Mapping& m : maps)
    if (address >= m.start && address < m.end) return what(m.path);
  return false;
}

// Code that may hold the allocator's or the loader's locks: a thread stopped
// there would deadlock in our dlopen.
bool is_runtime(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return is_libc(path) || base.rfind("ld-linux", 0) == 0 || base.rfind("ld64", 0) == 0 ||
         base.rfind("libpthread", 0) == 0;
}

// A thread is a safe place for the call when it is in a system call other than
// the memory ones (sysmalloc calls mmap/brk holding an arena lock), or running
// code outside libc and the loader.
bool safe_point(const user_regs_struct& r, const std::vector<Mapping>& maps) {
  const auto nr = static_cast<int64_t>(r.orig_rax);
  if (nr >= 0) {
    constexpr int64_t kMemorySyscalls[] = {9 /*mmap*/, 10 /*mprotect*/, 11 /*munmap*/, 12 /*brk*/,
                                           25 /*mremap*/, 28 /*madvise*/};
    for (int64_t m : kMemorySyscalls)
      if (nr == m) return false;
    return true;
  }
  return !in_any(maps, r.rip, is_runtime);
}

// Stops a thread of `pid` at a safe point: tries each thread in turn (the main
// thread first), letting it run a little between tries, for about two seconds.
Expected<TracedThread> stop_at_safe_point(pid_t pid) {
  std::optional<Error> last;
  for (int round = 0; round < 100; ++round) {
    const auto maps = read_maps(pid);
    const auto tids = threads_of(pid);
    if (tids.empty()) return Error{fmt::format("process {} exited during the attach", pid)};
    for (pid_t tid : tids) {
      auto t = TracedThread::seize(pid, tid);
      if (!t) {
        // The first thread's error is the process's (permission, exit); a thread
        // that exits meanwhile is skipped.
        if (tid == pid || ::kill(pid, 0) != 0) return t.error();
        continue;
      }
      if (safe_point(t->regs(), maps)) return t;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Error{fmt::format("no thread of process {} stopped outside the C library and the dynamic loader "
                           "in 2 s of trying (all busy allocating?); try again",
                           pid)};
}

struct Libc {
  uint64_t dlopen = 0, dlerror = 0;
  int mode_flags = 0;  // added to RTLD_NOW (__libc_dlopen_mode needs __RTLD_DLOPEN)
};

Expected<Libc> find_libc(pid_t pid) {
  const auto maps = read_maps(pid);
  const auto libc = find_module(maps, is_libc);
  if (!libc) return Error{fmt::format("process {} has no C library mapped (statically linked?)", pid)};
  const std::string file = path_in(pid, libc->path);
  Libc l;
  if (auto d = dynamic_symbol(file, "dlopen")) {
    l.dlopen = libc->base + *d;
    if (auto e = dynamic_symbol(file, "dlerror")) l.dlerror = libc->base + *e;
  } else if (auto old = dynamic_symbol(file, "__libc_dlopen_mode")) {
    // glibc before 2.34 keeps dlopen in libdl, which the program may not load.
    l.dlopen = libc->base + *old;
    l.mode_flags = 0x80000000;  // __RTLD_DLOPEN
  } else {
    return Error{fmt::format("{}: {}", libc->path, d.error().message)};
  }
  return l;
}

// The address of `symbol` of `library` as loaded in `pid`.
Expected<uint64_t> entry_point(pid_t pid, const std::string& library, const std::string& symbol) {
  const auto maps = read_maps(pid);
  std::error_code ec;
  const auto ours = find_module(maps, [&](const std::string& p) {
    return p == library || std::filesystem::equivalent(path_in(pid, p), library, ec);
  });
  if (!ours) return Error{fmt::format("memloupe is not loaded in process {}", pid)};
  auto offset = dynamic_symbol(library, symbol);
  if (!offset) return offset.error();
  return ours->base + *offset;
}

}  // namespace

Expected<bool> start_recording(pid_t pid, const std::string& library, const std::string& config) {
  if (auto ok = check_target(pid); !ok) return ok.error();
  // Under `memloupe run` (or a descendant of a traced process): its hooks already
  // see every call, and a second recorder would chain onto them.
  if (find_module(read_maps(pid), [](const std::string& p) { return p.ends_with("/libmemloupe_preload.so"); }))
    return Error{fmt::format("process {} was started with memloupe's preload library (under `memloupe run`?); "
                             "it is recorded, or can be, from its start: attach is for processes without it",
                             pid)};
  auto libc = find_libc(pid);
  if (!libc) return libc.error();
  auto thread = stop_at_safe_point(pid);
  if (!thread) return thread.error();
  auto handle = thread->call(libc->dlopen, {library, uint64_t(RTLD_NOW | libc->mode_flags)});
  if (!handle) return handle.error();
  if (*handle == 0) {
    std::string why = "unknown reason";
    if (libc->dlerror != 0)
      if (auto msg = thread->call(libc->dlerror, {}); msg && *msg != 0) why = thread->read_string(*msg);
    return Error{fmt::format("process {} could not load {}: {}", pid, library, why)};
  }
  auto begin = entry_point(pid, library, "memloupe_attach_begin");
  if (!begin) return begin.error();
  auto result = thread->call(*begin, {config});
  if (!result) return result.error();
  if (*result != 0)
    return Error{fmt::format("process {} was not recorded: {}", pid, attach_result_message(*result))};
  return true;
}

Expected<bool> stop_recording(pid_t pid, const std::string& library) {
  if (::kill(pid, 0) != 0) return Error{fmt::format("no process {}", pid)};
  auto end = entry_point(pid, library, "memloupe_attach_end");
  if (!end) return end.error();
  auto thread = stop_at_safe_point(pid);
  if (!thread) return thread.error();
  auto result = thread->call(*end, {});
  if (!result) return result.error();
  if (*result != 0) return Error{fmt::format("memloupe was not recording process {}", pid)};
  return true;
}

}  // namespace memloupe::attach
