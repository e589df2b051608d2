#include "finalize/symbol_preparer.h"

#include <string_view>

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

bool holds_roots_surely(const symbolize::Module& m) {
  const std::string_view path = m.path;
  const size_t slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with(kLibc);
}

}  // namespace

void SymbolPreparer::update(const Collected& read, bool globals) {
  std::vector<Task> tasks;
  if (!guessed_) {
    // The trace's module list reaches the file with the recorder's first
    // chunk, which for a program of few events (python3: 18 k) is written at
    // its exit: libc's compressed debug file was then opened and indexed twice
    // (frames and globals, ~0.1 s of CPU) after the exit. A dynamically linked
    // program almost surely runs with the C library this process runs with,
    // and holds backtrace addresses in it (stdio's buffers, strdup, ...), so
    // that file is prepared from the start. The guess is keyed as the trace's
    // module will be (path, build-id): right, the trace's tasks find it done;
    // wrong, it costs that CPU on the follower's side and changes no result.
    guessed_ = true;
    if (auto libc = symbolize::loaded_module_named(kLibc)) {
      tasks.push_back({*libc, false});
      if (globals) tasks.push_back({*libc, true});
    }
  }
  const std::vector<symbolize::Module>& modules = read.modules.modules();
  for (; modules_seen_ < modules.size(); ++modules_seen_)
    if (globals && holds_roots_surely(modules[modules_seen_])) tasks.push_back({modules[modules_seen_], true});
  if (framed_.size() < modules.size()) framed_.resize(modules.size());
  for (; addresses_seen_ < read.addresses.size(); ++addresses_seen_) {
    const uint32_t m = read.addresses[addresses_seen_].module.value;
    if (framed_[m]) continue;
    framed_[m] = true;
    tasks.push_back({modules[m], false});
    if (globals && !holds_roots_surely(modules[m])) tasks.push_back({modules[m], true});
  }
  if (tasks.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (Task& t : tasks) queue_[t.globals].push_back(std::move(t.module));
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
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return closing_ || !queue.empty(); });
    if (abandon_ || failure_ || queue.empty()) break;
    const symbolize::Module module = std::move(queue.front());
    queue.pop_front();
    lock.unlock();
    try {
      if (globals) {
        prepared_.prepare_globals(module);
      } else {
        prepared_.prepare_frames(module);
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
