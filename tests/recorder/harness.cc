#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace memloupe::recorder_test {

fs::path binary(const std::string& name) { return fs::path(MEMLOUPE_BINARY_DIR) / "bin" / name; }
fs::path preload_library() { return binary("libmemloupe_preload.so"); }

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() /
          ("memloupe_e2e." + std::to_string(::getpid()) + "." + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

bool RunResult::exited(int code) const {
  return !timed_out && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == code;
}
bool RunResult::killed_by(int signal) const {
  return !timed_out && WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == signal;
}
std::string RunResult::describe() const {
  std::ostringstream s;
  if (timed_out) s << "timed out; ";
  if (WIFEXITED(wait_status)) s << "exit " << WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) s << "signal " << WTERMSIG(wait_status);
  s << "\n--- stdout ---\n" << out << "--- stderr ---\n" << err;
  return s.str();
}

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Our environment without anything that would change how the child is traced.
std::vector<std::string> child_environment(const RunOptions& o) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("LD_PRELOAD=") || v.starts_with("MEMLOUPE_")) continue;
    env.emplace_back(v);
  }
  if (o.preload) env.push_back("LD_PRELOAD=" + preload_library().string());
  env.insert(env.end(), o.env.begin(), o.env.end());
  return env;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const RunOptions& options) : options_(options) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env = child_environment(options);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (io_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (io_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
}

Process::~Process() {
  if (!result_) wait();
}

std::string Process::stdout_so_far() const { return slurp(io_ / "stdout"); }

RunResult Process::wait() {
  if (result_) return *result_;
  RunResult r;
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (;;) {
    const pid_t done = ::waitpid(pid_, &r.wait_status, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &r.wait_status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  r.out = slurp(io_ / "stdout");
  r.err = slurp(io_ / "stderr");
  result_ = r;
  return r;
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  Process p(argv, options);
  return p.wait();
}

format::FuncTotal TraceData::total(format::Func f) const {
  return totals.empty() ? format::FuncTotal{} : totals.back().totals[static_cast<unsigned>(f)];
}

size_t TraceData::alloc_events(format::Func f) const {
  size_t n = 0;
  for (const auto& a : allocs) n += a.event.func == f;
  return n;
}

size_t TraceData::free_events(format::Func f) const {
  size_t n = 0;
  for (const auto& e : frees) n += e.func == f;
  return n;
}

std::vector<std::string> TraceData::functions_at(uint64_t address) const {
  std::vector<std::string> names;
  const auto it = symbols.find(address);
  if (it != symbols.end())
    for (const auto& frame : it->second) names.push_back(frame.function);
  return names;
}

Expected<TraceData> read_trace(const fs::path& path) {
  auto opened = reader::Reader::open(path.string());
  if (!opened) return opened.error();
  reader::Reader& r = *opened.value();
  TraceData t;
  t.info = r.info();
  t.file_size = fs::file_size(path);
  while (const format::Event* e = r.next()) {
    if (const auto* a = std::get_if<format::Alloc>(e)) {
      TraceData::AllocEvent copy{*a, {a->backtrace.begin(), a->backtrace.end()}};
      copy.event.backtrace = {};
      t.allocs.push_back(std::move(copy));
    } else if (const auto* f = std::get_if<format::Free>(e)) {
      t.frees.push_back(*f);
    } else if (const auto* c = std::get_if<format::CallTotals>(e)) {
      t.totals.push_back(*c);
    } else if (const auto* end = std::get_if<format::TraceEnd>(e)) {
      t.end = *end;
    } else if (const auto* s = std::get_if<format::ThreadStart>(e)) {
      t.thread_starts.push_back(*s);
    } else if (const auto* te = std::get_if<format::ThreadEnd>(e)) {
      t.thread_ends.push_back(te->thread.value);
    } else if (const auto* n = std::get_if<format::ThreadName>(e)) {
      t.thread_names[n->thread.value] = std::string(n->name);
    } else if (const auto* m = std::get_if<format::ModuleLoad>(e)) {
      t.modules_loaded.emplace_back(m->path);
    } else if (std::holds_alternative<format::ModuleUnload>(*e)) {
      ++t.modules_unloaded;
    } else if (std::holds_alternative<format::RssSample>(*e)) {
      ++t.rss_samples;
    } else if (const auto* mk = std::get_if<format::Marker>(e)) {
      t.markers.emplace_back(mk->name);
    }
  }
  t.error = r.error();
  t.symbols = r.symbols();
  return t;
}

bool in_order(const std::vector<std::string>& frames, const std::vector<std::string>& names) {
  size_t next = 0;
  for (const auto& f : frames)
    if (next < names.size() && f == names[next]) ++next;
  return next == names.size();
}

format::Func func_named(std::string_view name) {
  for (unsigned i = 0; i < format::kFuncCount; ++i)
    if (format::kFuncNames[i] == name) return static_cast<format::Func>(i);
  throw std::invalid_argument("no allocation function named " + std::string(name));
}

}  // namespace memloupe::recorder_test
