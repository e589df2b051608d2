#include "finalize/symbol_preparer.h"

namespace memloupe::finalize {

SymbolPreparer::SymbolPreparer(const symbolize::SymbolizerOptions& options)
    : prepared_(options), thread_([this] { run(); }) {}

SymbolPreparer::~SymbolPreparer() {
  {
    std::lock_guard lock(mutex_);
    abandon_ = closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void SymbolPreparer::update(const Collected& read, bool globals) {
  std::vector<Task> tasks;
  const std::vector<symbolize::Module>& modules = read.modules.modules();
  for (; modules_seen_ < modules.size(); ++modules_seen_)
    if (globals) tasks.push_back({modules[modules_seen_], true});
  if (framed_.size() < modules.size()) framed_.resize(modules.size());
  for (; addresses_seen_ < read.addresses.size(); ++addresses_seen_) {
    const uint32_t m = read.addresses[addresses_seen_].module.value;
    if (framed_[m]) continue;
    framed_[m] = true;
    tasks.push_back({modules[m], false});
  }
  if (tasks.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (Task& t : tasks) queue_.push_back(std::move(t));
  }
  changed_.notify_all();
}

symbolize::PreparedSymbolizers& SymbolPreparer::done() {
  std::unique_lock lock(mutex_);
  if (!closing_) {
    closing_ = true;
    changed_.notify_all();
  }
  changed_.wait(lock, [this] { return idle_; });
  if (failure_) std::rethrow_exception(failure_);
  return prepared_;
}

void SymbolPreparer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (abandon_ || queue_.empty()) break;
    const Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      if (task.globals) {
        prepared_.prepare_globals(task.module);
      } else {
        prepared_.prepare_frames(task.module);
      }
    } catch (...) {
      lock.lock();
      failure_ = std::current_exception();
      break;
    }
    lock.lock();
  }
  idle_ = true;
  changed_.notify_all();
}

}  // namespace memloupe::finalize
