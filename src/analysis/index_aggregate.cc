#include "analysis/index_aggregate.h"

#include <utility>

#include "analysis/event_time.h"

namespace memloupe::analysis {

ThreadedAggregate::ThreadedAggregate(const Overview& overview, const Query& query)
    : builder_(overview, no_symbols_, query) {
  filling_.records.reserve(kBatch);
  worker_ = std::thread([this] { run(); });
}

ThreadedAggregate::~ThreadedAggregate() { stop(); }

void ThreadedAggregate::add(const format::Event& event) {
  Record r{};
  if (const auto* a = std::get_if<format::Alloc>(&event)) {
    const auto [stack, is_new] = stacks_.intern(a->backtrace);
    if (is_new) filling_.frames.insert(filling_.frames.end(), a->backtrace.begin(), a->backtrace.end());
    r = Record{Kind::Alloc, is_new, a->thread.value, a->n_samples, stack,
               is_new ? static_cast<uint32_t>(a->backtrace.size()) : 0, a->time_ns, a->id.value, a->size};
  } else if (const auto* f = std::get_if<format::Free>(&event)) {
    r = Record{Kind::Free, false, f->thread.value, 0, 0, 0, f->time_ns, f->id.value, 0};
  } else if (const std::optional<uint64_t> t = event_time(event)) {
    r = Record{Kind::Time, false, 0, 0, 0, 0, *t, 0, 0};
  } else {
    return;  // no time: add() does nothing with it in pass 2
  }
  filling_.records.push_back(r);
  if (filling_.records.size() == kBatch) send();
}

void ThreadedAggregate::send() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < kMaxQueued || failure_; });
  if (failure_) {
    filling_.records.clear();  // finish() rethrows; nothing more is counted
    filling_.frames.clear();
    return;
  }
  queue_.push_back(std::move(filling_));
  if (!spare_.empty()) {
    filling_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    filling_ = Batch{};
    filling_.records.reserve(kBatch);
  }
  changed_.notify_all();
}

void ThreadedAggregate::run() {
  try {
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;
        batch = std::move(queue_.front());
        queue_.pop_front();
        changed_.notify_all();
      }
      size_t frames_at = 0;
      for (const Record& r : batch.records) {
        switch (r.kind) {
          case Kind::Alloc: {
            format::Alloc a;
            a.id = format::AllocId{r.id};
            a.thread = format::ThreadId{r.thread};
            a.time_ns = r.time_ns;
            a.size = r.size;
            a.n_samples = r.n_samples;
            std::span<const uint64_t> frames;
            if (r.new_stack) {
              frames = std::span<const uint64_t>(batch.frames).subspan(frames_at, r.new_frames);
              frames_at += r.new_frames;
            }
            builder_.add_interned(a, r.stack, r.new_stack, frames);
            break;
          }
          case Kind::Free:
            builder_.add(format::Free{format::AllocId{r.id}, format::ThreadId{r.thread}, r.time_ns, format::Func::Free});
            break;
          case Kind::Time:
            builder_.add_time(r.time_ns);
            break;
        }
      }
      batch.records.clear();
      batch.frames.clear();
      std::lock_guard lock(mutex_);
      spare_.push_back(std::move(batch));
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();
  }
}

void ThreadedAggregate::stop() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

Aggregate ThreadedAggregate::finish() && {
  if (!filling_.records.empty()) send();
  stop();  // the join orders the worker's work before what follows
  if (failure_) std::rethrow_exception(failure_);
  return std::move(builder_).finish();
}

}  // namespace memloupe::analysis
