#include "replay/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <variant>

#include "format/write_all.h"

namespace memloupe::replay {
namespace {

using format::Func;

// A live block as the preparation tracks it.
struct Block {
  uint32_t slot;
  uint32_t thread;    // replay thread whose op made the block
  uint32_t op;        // index of that op in the thread's stream
  uint8_t align_log2;
  uint64_t size;
};

struct ThreadBuild {
  std::vector<Op> ops;
  // For the windows: the window of this thread's latest call, the index of
  // that call, and of its last call in an earlier window (none: -1).
  uint64_t window = 0;
  int64_t last_call = -1;
  int64_t last_call_before_window = -1;
  std::vector<uint32_t> free_slots;  // slots this thread freed, reused by its own allocations only
  std::vector<uint32_t> waited;      // per other thread: the highest progress already waited for
};

// log2 of a recorded alignment, rounded up to a power of two (only memalign
// accepts other values; glibc rounds them up the same way). 0: the default.
uint8_t align_log2(uint32_t alignment) {
  if (alignment <= 1) return 0;
  return static_cast<uint8_t>(std::bit_width(alignment - 1));
}

bool is_realloc(Func f) { return f == Func::Realloc || f == Func::Reallocarray; }

class Builder {
 public:
  explicit Builder(const PrepareOptions& options) : options_(options) {}

  Prepared take() && {
    out_.threads.reserve(threads_.size());
    for (ThreadBuild& t : threads_) out_.threads.push_back(std::move(t.ops));
    out_.facts.threads = static_cast<uint32_t>(threads_.size());
    return std::move(out_);
  }

  std::optional<Error> add(const format::Event& event) {
    if (const auto* a = std::get_if<format::Alloc>(&event)) {
      note_time(a->time_ns);
      if (pending_ && a->realloc_of && *a->realloc_of == pending_->id) {
        const format::Free f = *pending_;
        pending_.reset();
        return realloc(f, *a);
      }
      if (auto e = flush_pending()) return e;
      return alloc(*a);
    }
    if (const auto* f = std::get_if<format::Free>(&event)) {
      note_time(f->time_ns);
      if (auto e = flush_pending()) return e;
      // The free half of a realloc comes just before its Alloc; hold it to merge.
      if (is_realloc(f->func)) {
        pending_ = *f;
        return {};
      }
      return free(*f);
    }
    if (const auto* r = std::get_if<format::RssSample>(&event)) {
      note_time(r->time_ns);
      if (auto e = flush_pending()) return e;
      probe(r->rss_bytes);
      out_.facts.recorded_peak_rss_bytes = std::max(out_.facts.recorded_peak_rss_bytes, r->rss_bytes);
    } else if (const auto* end = std::get_if<format::TraceEnd>(&event)) {
      note_time(end->time_ns);
    }
    return {};
  }

  // A realloc(p, 0) that freed: replayed as free(p), see docs/REPLAY.md.
  std::optional<Error> flush_pending() {
    if (!pending_) return {};
    const format::Free f = *pending_;
    pending_.reset();
    return free(f);
  }

 private:
  void note_time(uint64_t t) { out_.facts.duration_ns = std::max(out_.facts.duration_ns, t); }

  // An RSS sample: a Probe op right after the call that preceded it in the
  // trace, on that call's thread. At most kMaxProbes; past that only samples
  // that set a new maximum (the one the prediction uses).
  static constexpr size_t kMaxProbes = 4096;
  void probe(uint64_t rss) {
    if (!last_thread_) return;  // nothing to compare it with yet
    auto& points = out_.facts.rss_points;
    if (points.size() >= kMaxProbes && rss <= out_.facts.recorded_peak_rss_bytes) return;
    const auto index = static_cast<uint32_t>(points.size());
    points.push_back(RssPoint{rss, events_, out_.facts.max_live_blocks});
    threads_[*last_thread_].ops.push_back(Op{OpKind::Probe, 0, 0, 0, index, 0});
  }

  // The replay thread of a recorded thread. A thread's first op waits for the
  // op that came before it in the trace: a thread does not start replaying
  // before the point where the program had started it.
  Expected<uint32_t> thread_for(format::ThreadId id) {
    auto [it, fresh] = thread_index_.try_emplace(id.value, static_cast<uint32_t>(threads_.size()));
    if (!fresh) return it->second;
    if (threads_.size() >= kMaxThreads)
      return Error{"the trace has more than " + std::to_string(kMaxThreads) + " threads, the replayer's limit"};
    threads_.emplace_back();
    const uint32_t t = it->second;
    if (last_thread_) wait_for(t, *last_thread_, last_op_);
    return t;
  }

  // Makes thread `t` wait until op `op` of thread `other` has run.
  void wait_for(uint32_t t, uint32_t other, uint32_t op) {
    if (other == t) return;
    ThreadBuild& self = threads_[t];
    if (self.waited.size() <= other) self.waited.resize(other + 1, 0);
    if (self.waited[other] >= op + 1) return;  // an earlier wait already covers it
    self.waited[other] = op + 1;
    threads_[other].ops[op].flags |= kPublish;
    self.ops.push_back(Op{OpKind::Wait, 0, 0, 0, other, op + 1});
    ++out_.facts.waits;
  }

  // Thread `t` is about to make a call at trace position `calls_`: on entering
  // a new window, wait for every other thread's calls of the earlier windows.
  // Each of those calls is earlier in trace order, as the deadlock argument in
  // replayer_sync.h needs.
  void enter_window(uint32_t t) {
    if (options_.window == 0) return;
    const uint64_t w = calls_ / options_.window;
    ThreadBuild& self = threads_[t];
    if (w != self.window) {
      self.last_call_before_window = self.last_call;
      self.window = w;
      for (uint32_t u = 0; u < threads_.size(); ++u) {
        if (u == t) continue;
        const ThreadBuild& other = threads_[u];
        const int64_t before = other.window < w ? other.last_call : other.last_call_before_window;
        if (before >= 0) wait_for(t, u, static_cast<uint32_t>(before));
      }
    }
  }

  Expected<uint32_t> push(uint32_t t, const Op& op) {
    ThreadBuild& tb = threads_[t];
    if (tb.ops.size() >= kMaxOpsPerThread)
      return Error{"a thread of the trace makes more than " + std::to_string(kMaxOpsPerThread) +
                   " calls, the replayer's limit per thread"};
    tb.ops.push_back(op);
    last_thread_ = t;
    last_op_ = static_cast<uint32_t>(tb.ops.size() - 1);
    tb.last_call = last_op_;
    ++calls_;
    events_ += op.kind == OpKind::Realloc ? 2 : 1;
    return last_op_;
  }

  // A slot for a new block on thread `t`: one it freed itself, else one another
  // thread freed whose free `t` has already waited for (through a window), else
  // (windows off) one another thread freed, with a wait for that free; else a
  // new slot. Without reuse across threads, a producer whose blocks a consumer
  // frees would need a new slot per block, and the slot table (8 bytes per
  // slot, resident in the replayer) would grow with the trace.
  uint32_t new_slot(uint32_t t) {
    std::vector<uint32_t>& fs = threads_[t].free_slots;
    if (!fs.empty()) {
      const uint32_t s = fs.back();
      fs.pop_back();
      return s;
    }
    if (!pool_.empty()) {
      const Freed f = pool_.front();
      if (options_.window == 0 || f.window < threads_[t].window) {
        pool_.pop_front();
        if (options_.window == 0) wait_for(t, f.thread, f.op);
        return f.slot;
      }
    }
    return static_cast<uint32_t>(out_.slots++);
  }

  void add_live(uint64_t size) {
    live_bytes_ += size;
    out_.facts.ideal_peak_bytes = std::max(out_.facts.ideal_peak_bytes, live_bytes_);
    out_.facts.max_live_blocks = std::max<uint64_t>(out_.facts.max_live_blocks, live_.size());
  }

  std::optional<Error> alloc(const format::Alloc& a) {
    auto t = thread_for(a.thread);
    if (!t) return t.error();
    enter_window(*t);
    if (out_.slots >= UINT32_MAX) return Error{"the trace holds more live blocks than the replayer's slot ids count"};
    const uint32_t slot = new_slot(*t);
    const uint8_t al = align_log2(a.alignment);
    auto op = push(*t, Op{OpKind::Alloc, static_cast<uint8_t>(a.func), al, 0, slot, a.size});
    if (!op) return op.error();
    live_[a.id.value] = Block{slot, *t, *op, al, a.size};
    ++out_.facts.alloc_calls;
    add_live(a.size);
    return {};
  }

  // The block `id` is about to end on thread `t`: its op must wait for the
  // allocation when another thread made it.
  std::optional<Block> end_block(format::AllocId id, uint32_t t) {
    const auto it = live_.find(id.value);
    if (it == live_.end()) {
      ++out_.facts.unmatched_frees;
      return std::nullopt;
    }
    const Block b = it->second;
    live_.erase(it);
    live_bytes_ -= b.size;
    if (b.thread != t) {
      ++out_.facts.cross_thread_frees;
      wait_for(t, b.thread, b.op);
    }
    return b;
  }

  std::optional<Error> free(const format::Free& f) {
    auto t = thread_for(f.thread);
    if (!t) return t.error();
    enter_window(*t);
    const std::optional<Block> b = end_block(f.id, *t);
    if (!b) return {};
    // Sized deletes get the allocation's size, aligned ones its alignment.
    auto op = push(*t, Op{OpKind::Free, static_cast<uint8_t>(f.func), b->align_log2, 0, b->slot, b->size});
    if (!op) return op.error();
    if (b->thread == *t) {
      threads_[*t].free_slots.push_back(b->slot);
    } else {
      pool_.push_back(Freed{b->slot, *t, *op, threads_[*t].window});
    }
    ++out_.facts.free_calls;
    return {};
  }

  std::optional<Error> realloc(const format::Free& f, const format::Alloc& a) {
    auto t = thread_for(a.thread);
    if (!t) return t.error();
    enter_window(*t);
    const std::optional<Block> b = end_block(f.id, *t);
    if (!b) return alloc(a);  // unknown old block: the new one is all there is
    auto op = push(*t, Op{OpKind::Realloc, static_cast<uint8_t>(a.func), 0, 0, b->slot, a.size});
    if (!op) return op.error();
    live_[a.id.value] = Block{b->slot, *t, *op, 0, a.size};
    ++out_.facts.alloc_calls;
    ++out_.facts.realloc_calls;
    add_live(a.size);
    return {};
  }

  PrepareOptions options_;
  Prepared out_;
  uint64_t calls_ = 0;  // calls pushed so far, all threads: the trace position of the next
  uint64_t events_ = 0; // Alloc and Free events so far (a realloc is both)
  std::vector<ThreadBuild> threads_;
  std::unordered_map<uint32_t, uint32_t> thread_index_;
  std::unordered_map<uint64_t, Block> live_;
  uint64_t live_bytes_ = 0;
  std::optional<format::Free> pending_;
  // Slots freed by a thread that did not allocate their block, in trace order.
  struct Freed {
    uint32_t slot;
    uint32_t thread;  // that freed it
    uint32_t op;      // the free
    uint64_t window;  // of the free
  };
  std::deque<Freed> pool_;
  std::optional<uint32_t> last_thread_;
  uint32_t last_op_ = 0;
};

}  // namespace

uint64_t Prepared::total_ops() const {
  uint64_t n = 0;
  for (const auto& t : threads) n += t.size();
  return n;
}

Expected<Prepared> prepare(reader::Reader& reader, const PrepareOptions& options) {
  if (reader.info().mode != format::Mode::All) {
    return Error{"this is a sampled trace: a replay needs every allocation call; record one with "
                 "`memloupe run --all`"};
  }
  Builder builder(options);
  while (const format::Event* e = reader.next()) {
    if (auto error = builder.add(*e)) return *error;
  }
  if (auto error = builder.flush_pending()) return *error;
  Prepared p = std::move(builder).take();
  p.facts.damage = reader.error();
  return p;
}

namespace {

std::optional<Error> write_all(int fd, const void* data, size_t n) {
  if (!format::write_all(fd, data, n)) return Error{std::string("cannot write the prepared ops: ") + std::strerror(errno)};
  return {};
}

}  // namespace

Expected<bool> write_op_file(const Prepared& prepared, int fd) {
  OpFileHeader h{};
  std::memcpy(h.magic, kOpFileMagic, sizeof h.magic);
  h.version = kOpFileVersion;
  h.threads = static_cast<uint32_t>(prepared.threads.size());
  h.slots = prepared.slots;
  h.total_ops = prepared.total_ops();
  h.alloc_calls = prepared.facts.alloc_calls;
  h.free_calls = prepared.facts.free_calls;
  h.probes = prepared.facts.rss_points.size();
  std::vector<OpThread> table;
  uint64_t first = 0;
  for (const auto& t : prepared.threads) {
    table.push_back(OpThread{first, t.size()});
    first += t.size();
  }
  if (auto e = write_all(fd, &h, sizeof h)) return *e;
  if (auto e = write_all(fd, table.data(), table.size() * sizeof(OpThread))) return *e;
  for (const auto& t : prepared.threads) {
    if (auto e = write_all(fd, t.data(), t.size() * sizeof(Op))) return *e;
  }
  return true;
}

}  // namespace memloupe::replay
