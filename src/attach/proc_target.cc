#include "attach/proc_target.h"

#include <dirent.h>
#include <elf.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace memloupe::attach {
namespace {

// The value of a "Name:\tvalue" line of /proc/PID/status (empty if absent).
std::string status_field(pid_t pid, const std::string& name) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + ":", 0) == 0) {
      const size_t v = line.find_first_not_of(" \t", name.size() + 1);
      return v == std::string::npos ? "" : line.substr(v);
    }
  return "";
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string comm_of(pid_t pid) { return read_first_line(fmt::format("/proc/{}/comm", pid)); }

}  // namespace

std::vector<Mapping> read_maps(pid_t pid) {
  std::vector<Mapping> maps;
  std::ifstream in(fmt::format("/proc/{}/maps", pid));
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode [path]
    std::istringstream s(line);
    std::string range, perms, dev, inode;
    Mapping m;
    s >> range >> perms >> std::hex >> m.offset >> dev >> inode;
    const size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    m.start = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.executable = perms.size() > 2 && perms[2] == 'x';
    std::getline(s >> std::ws, m.path);
    maps.push_back(std::move(m));
  }
  return maps;
}

bool is_libc(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("libc.so", 0) == 0 || (base.rfind("libc-", 0) == 0 && base.find(".so") != std::string::npos);
}

std::string path_in(pid_t pid, const std::string& path) { return fmt::format("/proc/{}/root{}", pid, path); }

Expected<bool> check_target(pid_t pid) {
  if (pid <= 0) return Error{fmt::format("{} is not a process id", pid)};
  if (::kill(pid, 0) != 0 && errno == ESRCH) return Error{fmt::format("no process {}", pid)};
  const std::string name = comm_of(pid);
  const std::string who = fmt::format("process {} ({})", pid, name);
  if (name.empty()) return Error{fmt::format("no process {} (or its /proc entry cannot be read)", pid)};
  const std::string tgid = status_field(pid, "Tgid");
  if (!tgid.empty() && tgid != std::to_string(pid))
    return Error{fmt::format("{} is a thread of process {}; attach to the process", pid, tgid)};
  // Uid: real effective saved fs.
  std::istringstream uids(status_field(pid, "Uid"));
  uid_t real = 0;
  uids >> real;
  if (::geteuid() != 0 && real != ::geteuid())
    return Error{fmt::format("{} belongs to user {}: attach as that user, or as root", who, real)};
  const std::string tracer = status_field(pid, "TracerPid");
  if (!tracer.empty() && tracer != "0") {
    const pid_t t = static_cast<pid_t>(std::stol(tracer));
    return Error{fmt::format("{} is already being traced by process {} ({}); a process has one tracer at a "
                             "time: detach the debugger or profiler first",
                             who, t, comm_of(t))};
  }
  const std::string state = status_field(pid, "State");
  if (state.rfind("T", 0) == 0)
    return Error{fmt::format("{} is stopped ({}): continue it first (kill -CONT {})", who, state, pid)};
  if (state.rfind("Z", 0) == 0 || state.rfind("X", 0) == 0)
    return Error{fmt::format("{} has exited ({})", who, state)};

  // The executable's ELF header: class, machine, and whether it has an interpreter.
  std::ifstream exe(fmt::format("/proc/{}/exe", pid), std::ios::binary);
  Elf64_Ehdr eh{};
  if (!exe.read(reinterpret_cast<char*>(&eh), sizeof(eh)) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return Error{fmt::format("cannot read the executable of {} (/proc/{}/exe)", who, pid)};
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return Error{fmt::format("{} is a 32-bit program; memloupe attach supports 64-bit x86-64 processes only", who)};
  if (eh.e_machine != EM_X86_64)
    return Error{fmt::format("{} is not an x86-64 program (ELF machine {}); memloupe attach supports x86-64 only",
                             who, eh.e_machine)};
  const auto maps = read_maps(pid);
  if (!find_module(maps, is_libc))
    return Error{fmt::format("{} is statically linked (no C library is mapped in it): there is no dynamic "
                             "loader to load the recorder with; run it under `memloupe run` instead",
                             who)};
  return true;
}

std::string explain_ptrace_error(pid_t pid, int err) {
  if (err == ESRCH) return fmt::format("process {} exited during the attach", pid);
  if (err != EPERM) return fmt::format("cannot trace process {}: {}", pid, std::strerror(err));
  const std::string yama = read_first_line("/proc/sys/kernel/yama/ptrace_scope");
  std::string why = fmt::format("not permitted to trace process {}", pid);
  if (yama == "1")
    return why + ": Yama's kernel.yama.ptrace_scope is 1 (a process may trace only its descendants). Run "
                 "memloupe as root or with CAP_SYS_PTRACE, or allow it with `sysctl kernel.yama.ptrace_scope=0`";
  if (yama == "2")
    return why + ": Yama's kernel.yama.ptrace_scope is 2 (only with CAP_SYS_PTRACE). Run memloupe as root "
                 "(or `setcap cap_sys_ptrace+ep` on it), or set `sysctl kernel.yama.ptrace_scope=0` or 1";
  if (yama == "3")
    return why + ": Yama's kernel.yama.ptrace_scope is 3 (ptrace disabled until the next reboot)";
  return why + ": memloupe needs the same user as the process and no setuid/undumpable flag on it, or "
               "CAP_SYS_PTRACE (in a container: --cap-add=SYS_PTRACE; a seccomp profile may also forbid ptrace)";
}

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids;
  if (DIR* d = ::opendir(fmt::format("/proc/{}/task", pid).c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    ::closedir(d);
  }
  std::sort(tids.begin(), tids.end());
  std::stable_partition(tids.begin(), tids.end(), [pid](pid_t t) { return t == pid; });
  return tids;
}

}  // namespace memloupe::attach
