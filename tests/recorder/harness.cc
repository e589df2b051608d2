#include "harness.h"

#include <sys/wait.h>

#include <map>
#include <sstream>

namespace memloupe::recorder_test {

fs::path binary(const std::string& name) { return fs::path(MEMLOUPE_BINARY_DIR) / "bin" / name; }
fs::path preload_library() { return binary("libmemloupe_preload.so"); }

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

// Our environment without anything that would change how the child is traced.
std::vector<std::string> child_environment(const RunOptions& o) {
  std::vector<std::string> env;
  for (std::string& v : test_support::current_environment()) {
    if (v.starts_with("LD_PRELOAD=") || test_support::is_memloupe_setting(v)) continue;
    env.push_back(std::move(v));
  }
  if (o.preload) env.push_back("LD_PRELOAD=" + preload_library().string());
  env.insert(env.end(), o.env.begin(), o.env.end());
  return env;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const RunOptions& options)
    : options_(options),
      child_(test_support::ChildSpec{argv, child_environment(options), options.cwd, {}, io_ / "stdout",
                                     io_ / "stderr"}) {}

Process::~Process() {
  if (!result_) wait();
}

std::string Process::stdout_so_far() const { return test_support::read_file(io_ / "stdout"); }

RunResult Process::wait() {
  if (result_) return *result_;
  const test_support::ChildExit exit = child_.wait(options_.timeout);
  RunResult r;
  r.wait_status = exit.wait_status;
  r.timed_out = exit.timed_out;
  r.out = test_support::read_file(io_ / "stdout");
  r.err = test_support::read_file(io_ / "stderr");
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
  std::map<uint64_t, uint64_t> live_at;    // address -> id of the live block there (with addresses)
  std::map<uint64_t, uint64_t> address_of;  // id -> address, for live blocks
  const bool addresses = t.info.addresses;  // MEMLOUPE_ADDRESSES=1: check the allocator's order too
  const auto end_block = [&](uint64_t id) {  // a realloc's old block gets its Free first
    const auto it = address_of.find(id);
    if (it == address_of.end()) {
      t.order_errors.push_back("free of block " + std::to_string(id) + ", not live");
      return;
    }
    if (addresses) live_at.erase(it->second);
    address_of.erase(it);
  };
  while (const format::Event* e = r.next()) {
    if (const auto* a = std::get_if<format::Alloc>(e)) {
      TraceData::AllocEvent copy{*a, {a->backtrace.begin(), a->backtrace.end()}};
      copy.event.backtrace = {};
      t.allocs.push_back(std::move(copy));
      if (t.info.mode == format::Mode::All) {
        if (!addresses) {
        } else if (const auto [it, fresh] = live_at.emplace(a->address, a->id.value); !fresh)
          t.order_errors.push_back("block " + std::to_string(a->id.value) + " at the address of live block " +
                                   std::to_string(it->second));
        address_of[a->id.value] = a->address;
      }
    } else if (const auto* f = std::get_if<format::Free>(e)) {
      t.frees.push_back(*f);
      if (t.info.mode == format::Mode::All) end_block(f->id.value);
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
