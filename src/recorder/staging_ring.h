// --all mode's hand-off from the hooks to the encoder: a ticketed ring.
//
// Encoding every call under one trace lock serialises the program's threads on it,
// and the encoder's state migrates between cores with the lock: on 2 cores a
// 4-thread program spent a quarter of its time spinning (docs/RECORDER.md). Here a
// recorded call instead takes a ticket (one compare-exchange), writes its record
// into the ring slots its tickets name, and returns; whoever holds the trace lock
// next — the flush thread, woken when the ring fills — encodes the records in
// ticket order.
//
//   tickets:  consumed            issued = next_
//                 │ published…  gap │
//   slots:   ─────┼──■──■──■──□──■──┼───────   slot = ticket mod kSlots
//                 └─ drained in order; a gap (□: ticket taken, record not yet
//                    written) stops the drain until its writer publishes
//
// The ticket order is the trace's one total order (docs/FORMAT.md §6), so it must
// agree with the order in which the allocator hands addresses out: an allocation
// takes its ticket after the real call returns, a free before the real free runs,
// and a realloc under a lock that allocations wait for (the rules in event_path.h).
// A record is a 48-byte head (after its publication word) plus its frames: 9 in
// the head's slot, 15 in each further slot, so one record takes
// 1 + ceil((n - 9) / 15) consecutive tickets. A writer takes its tickets only
// when their slots are free: while the ring is full it calls its `help`
// function — drain it itself — and when that frees nothing, sleeps until the
// consumer has freed half the ring (wait_for_room). So a waiting writer holds no
// ticket, and the consumer never stops at the gap of a writer that sleeps.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "format/encoder.h"
#include "format/funcs.h"
#include "format/shared_frames.h"
#include "recorder/sys.h"
#include "recorder/unwind/unwind_share.h"

namespace memloupe::recorder {

enum class StagedKind : uint8_t {
  Alloc,    // a new block: address, size, alignment, frames
  Free,     // address (may be unknown to the trace: the consumer looks it up)
  Realloc,  // address (0 if the call failed), old_address, size, alignment, frames
};

// A call as the hooks record it, which is also the encoder's record of its
// block: the consumer hands it to Encoder::alloc as it is. Its own struct
// before, it was copied field by field into an AllocRecord for the encoder,
// and the fields, read from the slot before the look-ahead, were spilled
// across it and loaded again for the copy: ~25 instructions an allocation
// (docs/RECORDER.md, "The record read in place"). Read in place, read() stores
// each field once, where the encoder reads it.
//   thread, size, address, alignment, func: the call's;
//   time_ns: trace_stamp() (session.h) until apply() converts it in place;
//   backtrace: set by the consumer (StagingRing::read), or by the direct
//     path's caller; prefix: set by the consumer, the outer frames the record
//     shares with its thread's previous deep record;
//   n_samples: the direct path's (1 in the ring).
struct StagedRecord : format::AllocRecord {
  StagedKind kind = StagedKind::Alloc;
  bool sampled = true;  // Realloc: the new block is recorded (not paused)
  uint64_t old_address = 0;
};

// The frames of a thread's last staged backtrace, right-aligned (the outermost at
// [kStagedFrames - 1]), twice: the writer's copy, against which the next
// backtrace finds the outer frames it shares, and the consumer's, into which a
// record's own frames are put back in front of the shared ones. Consecutive
// allocations of a thread share most of a deep stack, so a record carries only
// the frames that changed: on bench_stl_deep (60-160 frames) copying all of them
// through the ring's slots and back took a tenth of the run's CPU. A ThreadSlot
// holds one; the writer's half is its thread's, the consumer's the trace-lock
// holder's.
inline constexpr size_t kStagedFrames = 256;
struct StagedFrames {
  uint64_t writer[kStagedFrames] = {};
  // The unwinder's walk id of the writer's copy (unwind.h, UnwindShare::walk;
  // 0: none, or the copy lacks outer frames of that walk's output).
  uint64_t writer_walk = 0;
  // Written by the record path's unwinding for the next put() with these
  // frames (capture_backtrace, before every put with them): the backtrace's
  // walk, and that its outermost `outer` frames are those of walk `previous`.
  UnwindShare next;
  uint32_t writer_n = 0;
  uint32_t writer_generation = 0;  // the ring's generation writer_n counts in
  // The consumer's half starts on a cache line of its own: the writer stores
  // writer_n on every put, and with consumer_generation beside it (as before)
  // the consumer's first load of a deep record missed its cache (a quarter of
  // StagingRing::read's samples on bench_stl_deep). The alignment also puts
  // the ThreadSlot after this one, whose counters its thread writes, on a line
  // apart from consumer[]'s outermost frames.
  alignas(64) uint32_t consumer_generation = 0;  // the generation of the last record put back
  uint32_t consumer_seq = 0;                     // records put back (SharedPrefix::seq)
  uint64_t consumer[kStagedFrames] = {};
};

// Copies m <= 15 frames (a slot's worth) in 16-byte moves, the last one
// overlapping the one before, never past dst + m: the destination's next
// frames may be a record's shared ones. Not memcpy: with a size known only at
// run time gcc emits `rep movsq`, whose start-up cost is most of a copy this
// short (on bench_stl_deep, a third of StagingRing::read's samples sat on it).
[[gnu::always_inline]] inline void copy_frames(uint64_t* dst, const uint64_t* src, size_t m) noexcept {
  if (m < 2) {
    if (m == 1) dst[0] = src[0];
    return;
  }
  for (size_t i = 0; i + 2 < m; i += 2) std::memcpy(dst + i, src + i, 16);
  std::memcpy(dst + m - 2, src + m - 2, 16);
}

class StagingRing {
 public:
  // A power of two; 2 MiB, touched only as far as a run's records reach. 4096
  // before: with writers that sleep when it is full, the larger ring quarters
  // the flush thread's wake-ups (one per quarter ring) and the context
  // switches around them (docs/RECORDER.md, "Waiting for room").
  static constexpr size_t kSlots = 16384;
  static constexpr size_t kSlotBytes = 128;
  static constexpr size_t kHeadFrames = 8;
  static constexpr size_t kMoreFrames = 15;
  static constexpr size_t kMaxFrames = kStagedFrames;
  static constexpr size_t kReleaseEvery = 64;  // records drained between releases of their slots

  StagingRing() noexcept = default;
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Maps the slots. False if the mapping failed (the caller encodes directly).
  bool init() noexcept;
  bool active() const noexcept { return slots_ != nullptr; }

  // How many times the consumer has woken writers waiting for room (tests).
  uint32_t wakeups() const noexcept { return room_.load(std::memory_order_relaxed) >> 1; }

  static size_t slots_for(size_t frames) noexcept {
    return frames <= kHeadFrames ? 1 : 1 + (frames - kHeadFrames + kMoreFrames - 1) / kMoreFrames;
  }

  // Writer: waits until the ring has room, takes tickets, writes and publishes
  // (reserve() and write()). Frames past kMaxFrames are dropped. With `mine` (the
  // calling thread's StagedFrames, for every record of that thread that has
  // frames), only the frames that differ from the thread's last backtrace are
  // written. Returns the ring's fill as this writer saw it (tickets issued up to
  // its own, minus drained), or kSlots while writers sleep waiting for room: the
  // caller wakes the consumer on a fill that high.
  // Inlined into the slow paths with write()'s head: out of line, put() and
  // write() took ~125 instructions per shallow record on bench_alloc_mt, a third
  // of them the calls' register saves and the record passed through the stack
  // (docs/RECORDER.md, "The writers' side in --all mode").
  template <class Help>
  [[gnu::always_inline]] uint64_t put(const StagedRecord& r, std::span<const uint64_t> frames, Help help,
                                      StagedFrames* mine = nullptr) noexcept {
    if (frames.size() > kMaxFrames) [[unlikely]] {
      frames = frames.first(kMaxFrames);
      if (mine != nullptr) mine->next = {};  // its outer frames are cut
    }
    const size_t shared = mine != nullptr ? share_with(*mine, frames) : 0;
    const std::span<const uint64_t> own = frames.first(frames.size() - shared);
    const size_t k = slots_for(own.size());
    uint64_t drained;
    const uint64_t t = reserve(k, help, drained);
    write(t, r, own, shared, mine);
    // Writers asleep: the consumer must come even if the ring looked less full
    // (this record may have been the gap a drain stopped at, and nobody else
    // will drain past it until a sleeper's bound runs out).
    if (room_.load(std::memory_order_relaxed) & 1) [[unlikely]]
      return kSlots;
    return t + k - drained;
  }

  // The two halves of put(), for a record without shared frames (tests hold a
  // ticket unpublished with them). reserve() returns the first of `k` tickets
  // whose slots are free, and the consumer's position it saw. While the ring
  // has no room it calls help() (true: it freed slots, look again) and, when
  // that freed none, sleeps in wait_for_room(). The compare-exchange rather
  // than a fetch_add is what keeps a ticket from being taken before its slot
  // is free: a writer that waited holding one would stop the consumer at its
  // gap while asleep.
  template <class Help>
  uint64_t reserve(size_t k, Help help, uint64_t& drained) noexcept {
    uint64_t t = next_.load(std::memory_order_relaxed);
    for (;;) {
      drained = consumed_.load(std::memory_order_acquire);
      if (drained + kSlots < t + k) [[unlikely]] {
        if (!help()) wait_for_room(t + k - kSlots);
        t = next_.load(std::memory_order_relaxed);
      } else if (next_.compare_exchange_weak(t, t + k, std::memory_order_relaxed)) {
        return t;
      }
    }
  }
  void write(uint64_t t, const StagedRecord& r, std::span<const uint64_t> frames) noexcept {
    write(t, r, frames, 0, nullptr);
  }

  // Consumer (one at a time: the trace-lock holder). Calls apply(record, frames)
  // for each published record in ticket order; `record` is the drain's, which
  // apply() may change (the encoder's time in place), and its backtrace is
  // `frames`. Stops at a gap unless `settle_ns`
  // is non-zero: then it waits, at most that long per gap, for every ticket issued
  // before the call. Returns the number of records applied.
  //
  // Before applying a record it calls ahead(address, old_address) with those
  // fields of each published record up to kLookahead records on, once per record
  // (old_address is 0 unless it is a Realloc): the consumer's lookups are random
  // accesses into tables bigger than a core's cache, and their addresses are
  // known a few records early, so it can prefetch them (the record's head slot
  // comes into the cache on the way). Records, not tickets: a deep backtrace
  // takes up to 18 slots, and a ticket kLookahead on was then mostly a
  // continuation slot of the same record (bench_stl_deep: the table's insert
  // missed the cache, 5% of the run's CPU).
  static constexpr uint64_t kLookahead = 4;
  template <class Apply, class Ahead>
  size_t drain(Apply apply, Ahead ahead, uint64_t settle_ns) noexcept {
    const uint64_t until = settle_ns ? next_.load(std::memory_order_acquire) : 0;
    uint64_t c = consumed_.load(std::memory_order_relaxed);
    size_t applied = 0;
    uint64_t scratch[kMaxFrames];
    // Records in [c, ahead_end) have been handed to ahead(); `ahead_n` of them.
    uint64_t ahead_end = c;
    uint64_t ahead_n = 0;
    // One record for all passes, in memory: read() stores its fields where
    // the encoder reads them. (A new one per pass was cleared whole each time,
    // by a `rep stos` of 12 words.)
    StagedRecord r;
    for (;;) {
      const size_t used = read(c, r, scratch);
      if (used == 0) {
        if (c >= until) break;
        // Sleepers may have room by now, while this gap's writer (preempted)
        // keeps us waiting.
        release(c);
        if (!wait_published(c, settle_ns)) break;
        continue;
      }
      const uint64_t next = c + used;
      if (ahead_n > 0) {
        --ahead_n;
      } else {
        ahead_end = next;
      }
      for (size_t k; ahead_n < kLookahead && (k = peek(ahead_end, ahead)) != 0; ++ahead_n) ahead_end += k;
      apply(r, r.backtrace);
      c = next;
      // Slots are freed in batches, so that the line writers read stays shared
      // most of the time.
      if (++applied % kReleaseEvery == 0) release(c);
    }
    release(c);
    return applied;
  }
  template <class Apply>
  size_t drain(Apply apply, uint64_t settle_ns) noexcept {
    return drain(apply, [](uint64_t, uint64_t) {}, settle_ns);
  }

 private:
  // A head slot's words, after `published` (write() and read() pack them):
  //   kind (bits 0-7) | func (8-15) | sampled (16) | own frames (17-31) | thread (32-63),
  //   alignment (0-31) | shared frames (32-47) | generation (48-63),
  //   time_ns, address, size, old_address, the writer's StagedFrames (or 0);
  //   then kHeadFrames frames.
  enum HeadWord : size_t {
    kFlagsWord, kAlignmentWord, kTimeWord, kAddressWord, kSizeWord, kOldAddressWord, kFramesWord,
    kHeadWords
  };
  static_assert(kHeadWords + kHeadFrames == kSlotBytes / 8 - 1);
  struct alignas(kSlotBytes) Slot {
    std::atomic<uint64_t> published;  // ticket + 1 once the record is written (head only)
    uint64_t words[kSlotBytes / 8 - 1];
  };
  static_assert(sizeof(Slot) == kSlotBytes);

  Slot& slot(uint64_t ticket) noexcept { return slots_[ticket & (kSlots - 1)]; }
  // How many outer frames `frames` shares with the writer's last backtrace, which
  // it then replaces. When the unwinder says how many outer frames the two share
  // at least (the backtrace's walk spliced the tail memo up to the stack's end,
  // and the memo was the previous backtrace's walk's), only the frames inside
  // those are compared.
  size_t share_with(StagedFrames& mine, std::span<const uint64_t> frames) noexcept;
  // Fills the record's slots and publishes it. The head inline; the frames
  // past the head slot's (deep records only) out of line, in write_more().
  [[gnu::always_inline]] void write(uint64_t t, const StagedRecord& r, std::span<const uint64_t> own,
                                    size_t shared, StagedFrames* mine) noexcept {
    Slot& head = slot(t);
    uint64_t* w = head.words;
    w[kFlagsWord] = static_cast<uint64_t>(r.kind) | uint64_t{static_cast<uint8_t>(r.func)} << 8 |
                    uint64_t{r.sampled} << 16 | uint64_t{own.size()} << 17 | uint64_t{r.thread.value} << 32;
    w[kAlignmentWord] = r.alignment | uint64_t{shared} << 32 | uint64_t{generation_} << 48;
    w[kTimeWord] = r.time_ns;
    w[kAddressWord] = r.address;
    w[kSizeWord] = r.size;
    w[kOldAddressWord] = r.old_address;
    w[kFramesWord] = reinterpret_cast<uintptr_t>(mine);
    if (own.size() <= kHeadFrames) [[likely]]
      copy_frames(w + kHeadWords, own.data(), own.size());  // (own.data() may be null, then the size is 0)
    else
      write_more(t, own);
    head.published.store(t + 1, std::memory_order_release);
  }
  // write()'s frames of a record that takes more than its head slot.
  void write_more(uint64_t t, std::span<const uint64_t> own) noexcept;
  // The record with ticket t, if published, into `r` (all but n_samples,
  // which the ring does not carry): the slots it takes,
  // else 0. Its frames (r.backtrace) stay in the slot when they are all there and fit (the common case for
  // shallow stacks), else they are gathered into `scratch` or, for a record with
  // shared frames, into the consumer's StagedFrames.
  // Inline, and the frames' copying out of line (gather): the call, its
  // register saves and the record's fields passed through memory had cost ~30
  // instructions per record on bench_alloc_mt, whose records nearly all take
  // the first branch.
  [[gnu::always_inline]] size_t read(uint64_t t, StagedRecord& r, uint64_t* scratch) noexcept {
    Slot& head = slot(t);
    if (head.published.load(std::memory_order_acquire) != t + 1) return 0;
    const uint64_t* w = head.words;
    const uint64_t flags = w[kFlagsWord];
    r.kind = static_cast<StagedKind>(flags & 0xff);
    r.func = static_cast<format::Func>((flags >> 8) & 0xff);
    r.sampled = (flags >> 16) & 1;
    const auto n = static_cast<size_t>((flags >> 17) & 0x7fff);
    r.thread = format::ThreadId{static_cast<uint32_t>(flags >> 32)};
    const uint64_t alignment_word = w[kAlignmentWord];
    r.alignment = static_cast<uint32_t>(alignment_word);
    r.time_ns = w[kTimeWord];
    r.address = w[kAddressWord];
    r.size = w[kSizeWord];
    r.old_address = w[kOldAddressWord];
    r.prefix = {};
    if (w[kFramesWord] == 0 && n <= kHeadFrames)
      r.backtrace = {w + kHeadWords, n};
    else
      r.backtrace = gather(t, r.prefix, n, (alignment_word >> 32) & 0xffff, scratch);
    return slots_for(n);
  }
  // read()'s frames when they are not all in the head slot, or the record
  // shares some with its thread's previous one: `n` own and `shared` shared.
  // `prefix`: the record's, set when it shares frames.
  std::span<const uint64_t> gather(uint64_t t, format::SharedPrefix& prefix, size_t n, size_t shared,
                                   uint64_t* scratch) noexcept;
  // ahead(address, old_address) of the record with ticket t, if t is a published
  // head (it stays as it is until the consumer passes it), and its slots; 0 if
  // not published. A slot that is not t's head holds another ticket + 1, or 0: a
  // continuation slot's word is left from its last use as a head, a lap or more
  // ago.
  template <class Ahead>
  size_t peek(uint64_t t, Ahead ahead) noexcept {
    const Slot& head = slot(t);
    if (head.published.load(std::memory_order_acquire) != t + 1) return 0;
    ahead(head.words[kAddressWord], head.words[kOldAddressWord]);
    return slots_for(static_cast<size_t>((head.words[kFlagsWord] >> 17) & 0x7fff));
  }
  // Waits up to limit_ns (> 0) for ticket t's writer to publish.
  static constexpr uint64_t kGapNapNs = 50'000;
  bool wait_published(uint64_t t, uint64_t limit_ns) noexcept;

  // Waiting for room. A writer that finds no room and cannot drain sleeps on
  // room_ rather than yield in a loop (with 4 writers on 2 cores the yields took
  // 9% of `memloupe run --all`'s CPU, and kept the flush thread from its core).
  // The consumer wakes the sleepers all at once, and only when at least half the
  // ring is free (counting every ticket issued): a woken writer then finds room
  // for itself and hundreds of records after it, instead of sleeping again
  // after one (an earlier futex wait that woke writers as slots came free woke
  // them tens of thousands of times a run). Sleepers hold no tickets, so a
  // consumer that keeps draining reaches the last ticket issued, and with it
  // half a ring free.
  //
  // room_: bit 0 "someone sleeps or is about to", the bits above a count of
  // wake-ups. No missed wake-up: a writer sets bit 0 and then reads consumed_,
  // the consumer stores consumed_ and then reads room_, all four sequentially
  // consistent, so either the writer sees the new position (and does not sleep
  // if it has room) or the consumer sees the bit. The futex sleeps only while
  // room_ still holds what the writer set, so a wake between the writer's look
  // and its sleep makes the sleep return at once. A consumer that stops at the
  // gap of a preempted writer with more than half the ring in use does not wake
  // anyone; that writer, once it publishes, wakes the flush thread (put()
  // reports a full ring while writers sleep), whose drain then reaches the end.
  // When nobody drains (the flush thread is busy compressing, or there is none),
  // a sleeper wakes after kRoomWaitNs and drains itself: a missed room costs at
  // most that.
  static constexpr uint64_t kRoomWaitNs = 1'000'000;
  void wait_for_room(uint64_t need_consumed) noexcept;
  // The consumer's position, published; wakes the sleepers if there are any
  // and half the ring is free.
  void release(uint64_t c) noexcept {
    consumed_.store(c, std::memory_order_seq_cst);
    if (room_.load(std::memory_order_seq_cst) & 1) [[unlikely]]
      wake_waiters(c);
  }
  void wake_waiters(uint64_t c) noexcept;

  Mapping map_;
  Slot* slots_ = nullptr;
  uint16_t generation_ = 0;  // a new one per init(): writers' StagedFrames from before are stale
  // Apart, so that writers taking tickets do not disturb the consumer's line.
  alignas(64) std::atomic<uint64_t> next_{0};
  alignas(64) std::atomic<uint64_t> consumed_{0};
  // On the consumer's line: writers write it only to sleep, the consumer reads
  // it once per kReleaseEvery records.
  std::atomic<uint32_t> room_{0};
};

}  // namespace memloupe::recorder
