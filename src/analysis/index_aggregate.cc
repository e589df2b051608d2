#include "analysis/index_aggregate.h"

#include <utility>

#include "analysis/event_time.h"
#include "format/varint.h"

namespace memloupe::analysis {
namespace {

using Record = EventPipe::Record;
using Kind = EventPipe::Kind;

format::Alloc alloc_of(const Record& r) {
  format::Alloc a;
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

// A logged record's first byte: its func, and its kind (a new stack's Alloc
// is a kind of its own, kNewStack).
constexpr uint8_t kNewStack = 3;
static_assert(format::kFuncCount <= 64, "the func takes the tag's upper six bits");

uint64_t get_varint(const uint8_t*& p) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
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

// ---------------------------------------------------------------- AggregateLog

void AggregateLog::append(const Record& r) {
  constexpr size_t kMaxRecord = 1 + 6 * format::kMaxVarint;
  if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < kMaxRecord) {
    blocks_.emplace_back().reserve(kBlock);
  }
  std::vector<uint8_t>& block = blocks_.back();
  uint8_t buf[kMaxRecord];
  uint8_t* p = buf;
  const uint8_t kind = r.kind == Kind::Alloc && r.new_stack ? kNewStack : static_cast<uint8_t>(r.kind);
  *p++ = static_cast<uint8_t>(static_cast<uint8_t>(r.func) << 2 | kind);
  p = format::put_varint(p, format::zigzag(static_cast<int64_t>(r.time_ns - time_)));
  time_ = r.time_ns;
  if (r.kind != Kind::Time) {
    p = format::put_varint(p, r.thread);
    p = format::put_varint(p, format::zigzag(static_cast<int64_t>(r.id - id_)));
    id_ = r.id;
  }
  if (r.kind == Kind::Alloc) {
    p = format::put_varint(p, r.size);
    p = format::put_varint(p, r.n_samples);
    if (!r.new_stack) p = format::put_varint(p, r.stack);  // a new one's is the next id
  }
  block.insert(block.end(), buf, p);
}

void AggregateLog::replay(AggregateBuilder& builder, const StackTable& stacks) const {
  uint64_t time = 0, id = 0;
  uint32_t next_stack = 0;
  for (const std::vector<uint8_t>& block : blocks_) {
    const uint8_t* p = block.data();
    const uint8_t* const end = p + block.size();
    while (p < end) {
      Record r{};
      const uint8_t tag = *p++;
      const uint8_t kind = tag & 3;
      r.func = static_cast<format::Func>(tag >> 2);
      r.kind = kind == kNewStack ? Kind::Alloc : static_cast<Kind>(kind);
      r.new_stack = kind == kNewStack;
      time += static_cast<uint64_t>(format::unzigzag(get_varint(p)));
      r.time_ns = time;
      if (r.kind == Kind::Time) {
        builder.add_time(time);
        continue;
      }
      r.thread = static_cast<uint32_t>(get_varint(p));
      id += static_cast<uint64_t>(format::unzigzag(get_varint(p)));
      r.id = id;
      if (r.kind == Kind::Free) {
        builder.add(free_of(r));
        continue;
      }
      r.size = get_varint(p);
      r.n_samples = static_cast<uint32_t>(get_varint(p));
      r.stack = r.new_stack ? next_stack++ : static_cast<uint32_t>(get_varint(p));
      builder.add_interned(alloc_of(r), r.stack, r.new_stack,
                           r.new_stack ? stacks.frames(r.stack) : std::span<const uint64_t>{});
    }
  }
}

uint64_t AggregateLog::bytes() const {
  uint64_t n = 0;
  for (const std::vector<uint8_t>& block : blocks_) n += block.capacity();
  return n;
}

// ---------------------------------------------------------------- ThreadedOverview

ThreadedOverview::ThreadedOverview(const format::TraceInfo& info)
    : builder_(info), pipe_([this](const EventPipe::Batch& batch) {
        for (const Record& r : batch.records) {
          if (log_) log_->append(r);
          if (r.kind == Kind::Alloc) {
            builder_.add(alloc_of(r));
          } else if (r.kind == Kind::Free) {
            builder_.add(free_of(r));
          }  // a Time record is for the log only
        }
      }) {}

ThreadedOverview::ThreadedOverview(const format::TraceInfo& info, StackTable& stacks, AggregateLog& log)
    : ThreadedOverview(info) {
  // Set before the first push(); the pipe's hand-over orders it before the worker's reads.
  stacks_ = &stacks;
  log_ = &log;
}

void ThreadedOverview::add(const format::Event& event) {
  if (const auto* a = std::get_if<format::Alloc>(&event)) {
    if (stacks_) {
      const auto [stack, is_new] = stacks_->intern(a->backtrace);
      pipe_.push(record_of(*a, stack, is_new));
    } else {
      pipe_.push(record_of(*a));
    }
  } else if (const auto* f = std::get_if<format::Free>(&event)) {
    pipe_.push(record_of(*f));
  } else {
    // Pass 2 uses nothing of the other events but their time (AggregateBuilder::add).
    if (const std::optional<uint64_t> t = log_ ? event_time(event) : std::nullopt) {
      pipe_.push(Record{Kind::Time, false, format::Func::Malloc, 0, 0, 0, *t, 0, 0});
    }
    pipe_.drain();
    builder_.add(event);
  }
}

Overview ThreadedOverview::finish() && {
  pipe_.finish();
  return std::move(builder_).finish();
}

}  // namespace memloupe::analysis
