#include "finalize/symbol_preparer.h"

#include <optional>
#include <string_view>

#include "symbolize/file_build_id.h"
#include "symbolize/loaded_modules.h"

namespace memloupe::finalize {

SymbolPreparer::SymbolPreparer(const symbolize::SymbolizerOptions& options)
    : prepared_(options), frames_thread_([this] { run(false); }), globals_thread_([this] { run(true); }) {}

SymbolPreparer::~SymbolPreparer() {
  {
    std::lock_guard lock(mutex_);
    abandon_ = closing_ = true;
  }
  changed_.notify_all();
  frames_thread_.join();
  globals_thread_.join();
}

namespace {

// Which modules' globals are read ahead for the annex: the allocator's and
// stdio's state makes libc hold roots in every snapshot, and its separate
// debug file is the costly one (compressed); the modules that hold backtrace
// addresses are the program's own code, whose globals are the likely roots.
// Reading every module's was measured: most were never looked in (the
// recorder's own library, the dynamic loader's compressed debug file, ...).
constexpr std::string_view kLibc = "libc.so";

bool holds_roots_surely(const symbolize::Module& m) { return m.file_name_starts_with(kLibc); }

}  // namespace

void SymbolPreparer::begin(const format::TraceInfo& info) {
  // The trace's module list reaches the file with the recorder's first
  // chunk, which for a program of few events (python3: 18 k) is written at
  // its exit: its executable's and libc's files (libc's compressed debug file
  // twice, frames and globals: ~0.3 s of CPU) were then prepared after the
  // exit. Both are known before: the header names the executable (the path
  // the recorder gives its module: /proc/self/exe), and a dynamically linked
  // program almost surely runs with the C library this process runs with and
  // holds backtrace addresses in it (stdio's buffers, strdup, ...). They are
  // keyed as the trace's modules will be (path, build-id): a right guess,
  // and the trace's tasks find them done; a wrong one costs that CPU beside
  // the program and changes no result. The dynamic loader is guessed too:
  // a program that dlopens (python3's extension modules) or starts threads
  // (their TLS) has frames in it, and its compressed debug file was ~20 ms
  // of python3's window on two threads; a program that does neither
  // (cc1plus) spends ~35 ms of CPU for nothing, while it runs on one core and
  // leaves the other.
  const bool globals = info.mode == format::Mode::All;
  std::vector<symbolize::Module> guesses;
  if (!info.executable.empty()) {
    symbolize::Module exe;
    exe.path = info.executable;
    exe.build_id = symbolize::file_build_id(exe.path);
    guesses.push_back(std::move(exe));
  }
  for (const std::string_view name : {kLibc, std::string_view("ld-linux")})
    if (auto m = symbolize::loaded_module_named(name)) guesses.push_back(std::move(*m));
  {
    std::lock_guard lock(mutex_);
    for (const symbolize::Module& m : guesses) {
      queue_[false].push_back(m);
      if (globals) queue_[true].push_back(m);
    }
  }
  changed_.notify_all();
}

void SymbolPreparer::update(const Collected& read, bool globals) {
  std::vector<Task> tasks;
  const std::vector<symbolize::Module>& modules = read.modules.modules();
  for (; modules_seen_ < modules.size(); ++modules_seen_)
    if (globals && holds_roots_surely(modules[modules_seen_])) tasks.push_back({modules[modules_seen_], true});
  if (framed_.size() < modules.size()) framed_.resize(modules.size());
  const size_t first_new = addresses_seen_;
  for (; addresses_seen_ < read.addresses.size(); ++addresses_seen_) {
    const uint32_t m = read.addresses[addresses_seen_].module.value;
    if (framed_[m]) continue;
    framed_[m] = true;
    tasks.push_back({modules[m], false});
    if (globals && !holds_roots_surely(modules[m])) tasks.push_back({modules[m], true});
  }
  if (tasks.empty() && first_new == addresses_seen_) return;
  {
    std::lock_guard lock(mutex_);
    for (Task& t : tasks) queue_[t.globals].push_back(std::move(t.module));
    if (first_new < addresses_seen_) {
      addresses_.insert(addresses_.end(), read.addresses.begin() + first_new, read.addresses.end());
      address_modules_ = read.modules;
    }
  }
  changed_.notify_all();
}

symbolize::PreparedSymbolizers& SymbolPreparer::done() {
  std::unique_lock lock(mutex_);
  if (!closing_) {
    closing_ = true;
    changed_.notify_all();
  }
  changed_.wait(lock, [this] { return idle_ == 2; });
  if (failure_) std::rethrow_exception(failure_);
  return prepared_;
}

void SymbolPreparer::run(bool globals) {
  std::deque<symbolize::Module>& queue = queue_[globals];
  // The frames' thread symbolises the addresses once the files are prepared.
  auto has_work = [&] { return !queue.empty() || (!globals && !addresses_.empty()); };
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return closing_ || has_work(); });
    if (abandon_ || failure_ || !has_work()) break;
    std::optional<symbolize::Module> module;
    std::vector<symbolize::AddressInModule> addresses;
    symbolize::ModuleMap modules;
    if (!queue.empty()) {
      module = std::move(queue.front());
      queue.pop_front();
    } else {
      addresses.swap(addresses_);
      modules = address_modules_;
    }
    lock.unlock();
    try {
      if (!module) {
        symbolize::symbolize_all_quietly(prepared_.frames(), modules, addresses, symbols_);
        symbolized_ += addresses.size();
      } else if (globals) {
        prepared_.prepare_globals(*module);
      } else {
        prepared_.prepare_frames(*module);
      }
    } catch (...) {
      lock.lock();
      if (!failure_) failure_ = std::current_exception();
      break;
    }
    lock.lock();
  }
  ++idle_;
  changed_.notify_all();
}

}  // namespace memloupe::finalize
