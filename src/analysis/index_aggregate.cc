#include "analysis/index_aggregate.h"

#include <algorithm>
#include <utility>

#include "analysis/usable_cpus.h"

namespace memloupe::analysis {
namespace {

using Record = EventPipe::Record;
using Kind = EventPipe::Kind;

// The Alloc a record stands for, written over `a`: a default Alloc but for
// the fields a record carries (each call sets them all). Reusing one Alloc
// spares zeroing a new one per record (a `rep stos`, a third of consume()'s
// time).
const format::Alloc& alloc_of(const Record& r, format::Alloc& a) {
  a.id = format::AllocId{r.id};
  a.thread = format::ThreadId{r.thread};
  a.time_ns = r.time_ns;
  a.size = r.size;
  a.n_samples = r.n_samples;
  // bytes_per_sample stays 0 (the header's): a trace whose rate changed gets no index.
  a.func = r.func;
  return a;
}

format::Free free_of(const Record& r) {
  return format::Free{format::AllocId{r.id}, format::ThreadId{r.thread}, r.time_ns, r.func};
}

Record record_of(const format::Alloc& a, uint32_t stack = 0, bool is_new = false) {
  return Record{Kind::Alloc, is_new, a.func, a.thread.value, a.n_samples, stack, a.time_ns, a.id.value, a.size};
}

Record record_of(const format::Free& f) {
  return Record{Kind::Free, false, f.func, f.thread.value, 0, 0, f.time_ns, f.id.value, 0};
}

}  // namespace

// ---------------------------------------------------------------- EventPipe

EventPipe::EventPipe(std::function<void(const Batch&)> consume) : consume_(std::move(consume)) {
  filling_.records.reserve(kBatch);
  worker_ = std::thread([this] { run(); });
}

EventPipe::~EventPipe() { stop(); }

void EventPipe::send() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < kMaxQueued || failure_; });
  if (failure_) {
    filling_.records.clear();  // drain() or finish() rethrows; nothing more is consumed
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

void EventPipe::drain() {
  if (!filling_.records.empty()) send();
  std::unique_lock lock(mutex_);
  // The mutex orders the worker's work on the batches before our return.
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || failure_; });
  lock.unlock();
  rethrow();
}

void EventPipe::finish() {
  drain();
  stop();
}

void EventPipe::rethrow() {
  std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void EventPipe::stop() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void EventPipe::run() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty() || failure_) return;  // closing; or failed, with nothing to do
      batch = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      changed_.notify_all();
    }
    std::exception_ptr failure;
    try {
      consume_(batch);
    } catch (...) {
      failure = std::current_exception();
    }
    batch.records.clear();
    batch.frames.clear();
    std::lock_guard lock(mutex_);
    busy_ = false;
    if (failure) {
      failure_ = failure;
      queue_.clear();
    } else {
      spare_.push_back(std::move(batch));
    }
    changed_.notify_all();
  }
}

// ---------------------------------------------------------------- ThreadedOverview

Handover default_handover() { return usable_cpus() > 2 ? Handover::Worker : Handover::Inline; }

void ThreadedOverview::use_worker() {
  // The builders' state so far is this thread's; starting the worker orders it before the worker's reads.
  if (!pipe_ && usable_cpus() >= 2) pipe_.emplace([this](const EventPipe::Batch& batch) { consume(batch); });
}

ThreadedOverview::ThreadedOverview(const format::TraceInfo& info, Handover handover)
    : ThreadedOverview(info, std::nullopt, handover) {}

ThreadedOverview::ThreadedOverview(const format::TraceInfo& info, const Query& query, Handover handover)
    : ThreadedOverview(info, std::optional<Query>(query), handover) {}

ThreadedOverview::ThreadedOverview(const format::TraceInfo& info, const std::optional<Query>& query,
                                   Handover handover)
    : builder_(info) {
  if (query) aggregate_.emplace(AggregateBuilder::Streaming{}, builder_, info, no_symbols_, *query);
  // Started once the builders exist; the pipe's hand-over orders them before the worker's reads.
  if (handover == Handover::Worker) pipe_.emplace([this](const EventPipe::Batch& batch) { consume(batch); });
}

void ThreadedOverview::consume(const EventPipe::Batch& batch) {
  format::Alloc alloc;  // alloc_of()'s
  if (!aggregate_) {
    for (const Record& r : batch.records) {
      if (r.kind == Kind::Alloc) {
        builder_.add(alloc_of(r, alloc));
      } else {
        builder_.add(free_of(r));
      }
    }
    return;
  }
  size_t frames = 0;  // into batch.frames
  for (const Record& r : batch.records) {
    if (r.kind == Kind::Free) {
      aggregate_->add(free_of(r));
    } else if (!r.new_stack) {
      aggregate_->add_interned(alloc_of(r, alloc), r.stack, false, {});
    } else {
      const size_t n = batch.frames[frames];
      aggregate_->add_interned(alloc_of(r, alloc), r.stack, true, {batch.frames.data() + frames + 1, n});
      frames += 1 + n;
    }
  }
}

void ThreadedOverview::add_other(const format::Alloc& a, const reader::BacktraceKey& key) {
  std::pair<uint32_t, bool> stack{0, false};
  if (aggregate_) stack = stacks_.intern(a.backtrace, key);
  if (pipe_) {
    return pipe_->push(record_of(a, stack.first, stack.second),
                       stack.second ? a.backtrace : std::span<const uint64_t>());
  }
  auto add = [&](const format::Alloc& alloc) {
    if (!aggregate_) return builder_.add(alloc);
    return aggregate_->add_interned(alloc, stack.first, stack.second, a.backtrace);
  };
  // As the pipe's record gives it: bytes_per_sample 0 (a trace whose rate
  // changed gets no index). Only those need the copy (an Alloc built per
  // event was a tenth of this function's instructions).
  if (a.bytes_per_sample == 0) return add(a);
  format::Alloc copy = a;
  copy.bytes_per_sample = 0;
  return add(copy);
}

void ThreadedOverview::add_other(const format::Free& f) {
  if (pipe_) return pipe_->push(record_of(f));
  if (!aggregate_) return builder_.add(f);
  return aggregate_->add(f);
}

void ThreadedOverview::add(const format::Event& event, const reader::BacktraceKey& key) {
  if (const auto* a = std::get_if<format::Alloc>(&event)) return add(*a, key);
  if (const auto* f = std::get_if<format::Free>(&event)) return add(*f);
  drain();
  if (aggregate_) {
    aggregate_->add(event);  // its time, and the OverviewBuilder's add()
  } else {
    builder_.add(event);
  }
}

ThreadedOverview::Result ThreadedOverview::finish() && {
  if (pipe_) pipe_->finish();
  Result out;
  if (aggregate_) out.aggregate = std::move(*aggregate_).finish();  // before the OverviewBuilder it drives
  out.overview = std::move(builder_).finish();
  return out;
}

}  // namespace memloupe::analysis
