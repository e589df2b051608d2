// State that the encoder and the reader update identically, event by event, to
// predict fields instead of writing them (docs/FORMAT.md §5.6):
//  - the recent-allocation window: the last kRecentAllocs allocations' address,
//    function and size class; and whether each of the last kLiveWindow is still
//    live. A free names its block by a *block reference*: a count of live
//    allocations between the block and a landmark (the newest allocation, or
//    one of the last blocks this thread freed), small for last-in-first-out and
//    first-in-first-out lifetimes alike, and for the entries of a table
//    replaced in turn; its function is predicted from the allocating function
//    (new -> delete, ...);
//  - in Mode::All, per size class, the addresses freed most recently, tagged
//    with the freeing thread: allocators hand a thread the blocks it freed last
//    (glibc and jemalloc tcaches), so the next address is usually one of them;
//    and, per thread, where the previous allocation ended (fresh memory is carved
//    off in order).
// No heap; both sides hold one of these.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "format/funcs.h"
#include "format/wire.h"

namespace memloupe::format {

// The backtrace-cache hash (docs/FORMAT.md §5.5), part of the format: the
// reader recomputes it to place decoded backtraces in the same cache way.
//
// Version 2 folds the frames outermost first from a seed that does not depend on
// the depth, and mixes the depth in last, so the state after each outermost
// prefix is a function of that prefix alone: consecutive backtraces share most
// of their outer frames, and both sides resume from the state at the shared
// prefix instead of hashing every frame again (BacktraceHasher).
inline constexpr uint64_t kBtHashSeed = 0x6a09e667f3bcc909ull;
inline uint64_t backtrace_hash_step(uint64_t h, uint64_t frame) noexcept {
  h = (h ^ frame) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}
// The hash of a backtrace of `depth` frames whose outermost-first fold ended in `state`.
inline uint64_t backtrace_hash_finish(uint64_t state, size_t depth) noexcept {
  return backtrace_hash_step(state, depth);
}
// From scratch (`frames` innermost first, as everywhere in the model).
inline uint64_t backtrace_hash(std::span<const uint64_t> frames) noexcept {
  uint64_t h = kBtHashSeed;
  for (size_t i = frames.size(); i-- > 0;) h = backtrace_hash_step(h, frames[i]);
  return backtrace_hash_finish(h, frames.size());
}
// Version 1 (read only): the depth first, the frames innermost first.
inline uint64_t backtrace_hash_v1(std::span<const uint64_t> frames) noexcept {
  uint64_t h = kBtHashSeed ^ frames.size();
  for (uint64_t f : frames) h = backtrace_hash_step(h, f);
  return h;
}

// The version-2 hash of a sequence of backtraces, each resumed from the outer
// frames it shares with the previous one: states_[i] is the fold of the previous
// backtrace's outermost i + 1 frames (prefix 0's is the seed, so a new hasher is
// all zero bytes).
class BacktraceHasher {
 public:
  // The hash of a backtrace of `n` frames whose outermost `common` (at most the
  // previous backtrace's depth) are the previous one's; outer(i) is its i-th
  // frame counting from the outermost (0).
  template <class Outer>
  uint64_t resume(size_t common, size_t n, Outer outer) noexcept {
    uint64_t h = common ? states_[common - 1] : kBtHashSeed;
    for (size_t i = common; i < n; ++i) states_[i] = h = backtrace_hash_step(h, outer(i));
    return backtrace_hash_finish(h, n);
  }

 private:
  uint64_t states_[kMaxFrames] = {};
};

// The two slots a backtrace may live in (2-way skewed-associative).
inline unsigned backtrace_way1(uint64_t hash) noexcept {
  return static_cast<unsigned>(hash >> (64 - kBtCacheBits));
}
inline unsigned backtrace_way2(uint64_t hash) noexcept {
  return static_cast<unsigned>(hash >> 20) & (kBtCacheSize - 1);
}

// Size classes: 16-byte steps up to 1 KiB (0..64), then 4 per power of two.
inline constexpr unsigned kSizeClasses = 65 + 54 * 4;
inline unsigned size_class(uint64_t size) noexcept {
  if (size <= 1024) return static_cast<unsigned>((size + 15) >> 4);
  const unsigned e = 64 - static_cast<unsigned>(__builtin_clzll(size - 1));  // 11..64
  return 65 + (e - 11) * 4 + static_cast<unsigned>(((size - 1) >> (e - 3)) & 3);
}

// Where an allocation of `size` ends if the allocator carves it off fresh memory
// right after a block of `prev_size` (glibc's chunk rounding; other allocators
// still land close).
inline uint64_t carve_end(uint64_t prev_addr, uint64_t prev_size) noexcept {
  const uint64_t chunk = (prev_size + 8 + 15) & ~uint64_t{15};
  return prev_addr + (chunk < 32 ? 32 : chunk);
}

inline constexpr unsigned kThreadBuckets = 8;  // per-thread predictions: thread % 8
inline constexpr unsigned kFreedDepth = 16;    // freed addresses remembered per size class

class AllocHistory {
 public:
  // All zero bytes (the encoder's state relies on it: encoder_state.h).
  constexpr AllocHistory() noexcept = default;

  // --- addresses (Mode::All) ---
  // The k-th most recently freed address of `size`'s class freed by `thread`, or
  // 0 if there are not k+1 of them; and the inverse (kNone if `address` is not there).
  static constexpr unsigned kNone = ~0u;
  uint64_t freed_address(uint64_t size, uint32_t thread, unsigned k) const noexcept;
  unsigned freed_index(uint64_t size, uint32_t thread, uint64_t address) const noexcept {
    return find_freed(size, thread, address).index;
  }
  // freed_index, and the newest entry of the class's list holding `address`
  // (whoever freed it; kNone if none): the one on_alloc will forget.
  struct FreedMatch {
    unsigned index;
    unsigned newest;
  };
  FreedMatch find_freed(uint64_t size, uint32_t thread, uint64_t address) const noexcept;
  uint64_t class_previous(uint64_t size) const noexcept { return class_prev_[size_class(size)]; }
  uint64_t thread_carve(uint32_t thread) const noexcept {
    const unsigned b = thread % kThreadBuckets;
    return carve_end(prev_addr_[b], prev_size_[b]);
  }

  // `newest`: find_freed's, if the lists did not change since; kScan: look it up.
  // Inline up to the address lists (as on_free): without addresses (the
  // default) the call's prologue and epilogue were most of its cost.
  static constexpr unsigned kScan = kNone - 1;
  void on_alloc(uint64_t id, uint64_t size, uint64_t address, Func func, uint32_t thread,
                unsigned newest = kScan) noexcept {
    const unsigned cls = size_class(size);
    recent_[id % kRecentAllocs] = {address, func, static_cast<uint16_t>(cls)};
    live_[(id % kLiveWindow) / 64] |= uint64_t{1} << (id % 64);
    if (address != 0) alloc_address(cls, size, address, thread, newest);
  }

  // --- block references (wire.h) ---
  // A trace of format version 1-3 names blocks by that version's references
  // (the reader says so before the first event; a new history uses version 4's).
  void use_v3_refs() noexcept { v3_refs_ = true; }
  // The encoder looks at landmarks 1 and 2 only for a block that kind 0 and
  // landmark 0 name with this many live blocks between or more, and only
  // within kFarSearchSpan ids of it (block_ref_v4).
  static constexpr uint64_t kFarSearchFrom = 16;
  static constexpr uint64_t kFarSearchSpan = 64;
  // The shortest reference to `id` (< next_id) as the thread `thread` sees it
  // (version 4: short, by the encoder's choice above).
  [[gnu::always_inline]] uint64_t block_ref(uint64_t id, uint64_t next_id, uint32_t thread) const noexcept {
    return v3_refs_ ? block_ref_v3(id, next_id, thread) : block_ref_v4(id, next_id, thread);
  }
  // The id a reference names, or kNoId if it names none. Inline, the scans out
  // of line: the reader resolves one per Free, and the call cost ~15 instructions.
  static constexpr uint64_t kNoId = ~uint64_t{0};
  [[gnu::always_inline]] uint64_t resolve_ref(uint64_t ref, uint64_t next_id, uint32_t thread) const noexcept {
    if (v3_refs_) [[unlikely]]
      return resolve_ref_v3(ref, next_id, thread);
    const uint64_t n = ref >> kRefBits;
    const unsigned kind = static_cast<unsigned>(ref) & ((1u << kRefBits) - 1);
    if (kind == 0) return select_down(next_id, recent_floor(next_id), n);
    if (kind == 1) return n < next_id ? next_id - 1 - n : kNoId;
    const uint64_t mark = landmark(thread, (kind - 2) / 2, next_id);
    if (mark == kNoId) return kNoId;
    if (kind % 2 == 0) return select_up(mark + 1, std::min(next_id, mark + 1 + kLandmarkSpan), n);
    return select_down(mark, below_floor(mark, next_id), n);
  }

  // `id` must be < next_id. Inline, as last_freed below: the encoder asks on
  // every free and the reader of every Free, and the calls cost more than the
  // lookups.
  Func predicted_free_func(uint64_t id, uint64_t next_id) const noexcept {
    if (!known(id, next_id)) return last_free_.get();
    return free_for_[static_cast<unsigned>(recent_[id % kRecentAllocs].func)].get();
  }
  // A free (or the free half of a realloc, which teaches no function prediction).
  void on_free(uint64_t id, uint64_t next_id, Func func, bool realloc, uint32_t thread) noexcept {
    if (!realloc) last_free_.set(func);
    if (!tracked(id, next_id)) return;
    live_[(id % kLiveWindow) / 64] &= ~(uint64_t{1} << (id % 64));
    const bool recent = known(id, next_id);
    if (!recent && v3_refs_) return;  // version 3's landmark is always a recent block
    uint64_t* marks = landmarks_[thread % kThreadBuckets];
    for (unsigned j = kLandmarks - 1; j > 0; --j) marks[j] = marks[j - 1];
    marks[0] = id + 1;
    if (!recent) return;
    const Recent& r = recent_[id % kRecentAllocs];
    if (!realloc) free_for_[static_cast<unsigned>(r.func)].set(func);
    if (r.address != 0) free_address(r, thread);
  }

 private:
  struct Recent {
    uint64_t address;
    Func func;
    uint16_t cls;
  };
  // A free function stored so that zero means Func::Free, the prediction before
  // any free is seen (xor: every value round-trips).
  struct FreeFunc {
    uint8_t bits = 0;
    Func get() const noexcept { return static_cast<Func>(bits ^ kFreeBits); }
    void set(Func f) noexcept { bits = static_cast<uint8_t>(static_cast<uint8_t>(f) ^ kFreeBits); }
    static constexpr uint8_t kFreeBits = static_cast<uint8_t>(Func::Free);
  };
  struct Freed {  // a stack: [depth - 1] is the most recent
    uint64_t addr[kFreedDepth];
    uint8_t thread[kFreedDepth];  // freeing thread's bucket
    uint8_t depth;
  };
  // on_alloc's and on_free's work on the address lists (Mode::All with addresses).
  void alloc_address(unsigned cls, uint64_t size, uint64_t address, uint32_t thread,
                     unsigned newest) noexcept;
  void free_address(const Recent& r, uint32_t thread) noexcept;
  struct FreedMasks;
  static FreedMasks freed_masks(const Freed& f, uint64_t address, uint8_t t) noexcept;
  // In the window of recent allocations (their address, function, class).
  static bool known(uint64_t id, uint64_t next_id) noexcept {
    return id < next_id && next_id - id <= kRecentAllocs;
  }
  // In the window of allocations whose liveness is kept.
  static bool tracked(uint64_t id, uint64_t next_id) noexcept {
    return id < next_id && next_id - id <= kLiveWindow;
  }
  static uint64_t recent_floor(uint64_t next_id) noexcept {
    return next_id > kRecentAllocs ? next_id - kRecentAllocs : 0;
  }
  // The lowest id a "below landmark `mark`" reference reaches.
  static uint64_t below_floor(uint64_t mark, uint64_t next_id) noexcept {
    const uint64_t span = mark > kLandmarkSpan ? mark - kLandmarkSpan : 0;
    const uint64_t window = next_id > kLiveWindow ? next_id - kLiveWindow : 0;
    return std::max(span, window);
  }
  bool live(uint64_t id) const noexcept {
    return (live_[(id % kLiveWindow) / 64] >> (id % 64)) & 1;
  }
  inline uint64_t newest_or_mark(uint64_t id, uint64_t next_id, uint64_t mark, unsigned bits) const noexcept;
  [[gnu::always_inline]] inline uint64_t block_ref_v4(uint64_t id, uint64_t next_id, uint32_t thread) const noexcept;
  uint64_t block_ref_v3(uint64_t id, uint64_t next_id, uint32_t thread) const noexcept;
  uint64_t resolve_ref_v3(uint64_t ref, uint64_t next_id, uint32_t thread) const noexcept;
  // Live ids in [lo, hi), or some count >= cap once it reaches cap; the caller
  // keeps both inside the window. Inlined into the block_ref_v* functions, its
  // only callers: most ranges are a word or two, where the call cost as much
  // as the count.
  [[gnu::always_inline]] inline uint64_t count_live(uint64_t lo, uint64_t hi,
                                                    uint64_t cap = ~uint64_t{0}) const noexcept;
  // The (n+1)-th live id scanning down from hi - 1 to floor, or up from lo
  // below hi. The first word inline (the reference names a block in it for
  // ~97% of the Frees of (a), (b) and (d)), the words after it out of line:
  // as calls they were ~20 instructions of every Free.
  [[gnu::always_inline]] uint64_t select_down(uint64_t hi, uint64_t floor, uint64_t n) const noexcept {
    if (hi <= floor) return kNoId;
    const uint64_t top = hi - 1;
    const uint64_t bits = word_below(hi);
    const auto count = static_cast<uint64_t>(__builtin_popcountll(bits));
    if (n < count) [[likely]] {
      // (The word may reach below floor: a bit there is not one to count, and
      // then neither is any bit of it above, which is why it was found.)
      const uint64_t id = (top & ~uint64_t{63}) + select_high(bits, n, count);
      return id >= floor ? id : kNoId;
    }
    return select_down_from(top & ~uint64_t{63}, floor, n - count);
  }
  [[gnu::always_inline]] uint64_t select_up(uint64_t lo, uint64_t hi, uint64_t n) const noexcept {
    if (lo >= hi) return kNoId;
    const WordUp w = word_up(lo, hi);
    const auto count = static_cast<uint64_t>(__builtin_popcountll(w.bits));
    if (n < count) [[likely]]
      return lo + select_low(w.bits, n);
    return select_up_from(w.to, hi, n - count);
  }
  // The live bits of the word holding id hi - 1, those of ids below hi only
  // (hi > 0): where count_live and select_down start.
  [[gnu::always_inline]] uint64_t word_below(uint64_t hi) const noexcept {
    return live_[((hi - 1) / 64) % kWords] & (~uint64_t{0} >> (63 - (hi - 1) % 64));
  }
  // The live bits of ids [lo, to), shifted down to lo; `to`: the end of lo's
  // word or hi, whichever comes first (lo < hi). select_up's step.
  struct WordUp {
    uint64_t bits, to;
  };
  [[gnu::always_inline]] WordUp word_up(uint64_t lo, uint64_t hi) const noexcept {
    const uint64_t word_end = (lo & ~uint64_t{63}) + 64;
    const uint64_t to = word_end < hi ? word_end : hi;
    uint64_t bits = live_[(lo % kLiveWindow) / 64] >> (lo % 64);
    if (to - lo < 64) bits &= (uint64_t{1} << (to - lo)) - 1;
    return {bits, to};
  }
  uint64_t select_down_from(uint64_t hi, uint64_t floor, uint64_t n) const noexcept;
  uint64_t select_up_from(uint64_t lo, uint64_t hi, uint64_t n) const noexcept;
  // The position of the (k+1)-th lowest set bit of `bits` (k < its popcount):
  // the byte it is in found by halving with popcounts, then at most seven bits
  // dropped (one at a time, as before, it took up to 63).
  [[gnu::always_inline]] static uint64_t select_low(uint64_t bits, uint64_t k) noexcept {
    unsigned at = 0;
    if (k >= 8) {
      const auto low32 = static_cast<uint64_t>(__builtin_popcountll(bits & 0xffffffff));
      if (k >= low32) k -= low32, bits >>= 32, at = 32;
      const auto low16 = static_cast<uint64_t>(__builtin_popcountll(bits & 0xffff));
      if (k >= low16) k -= low16, bits >>= 16, at += 16;
      const auto low8 = static_cast<uint64_t>(__builtin_popcountll(bits & 0xff));
      if (k >= low8) k -= low8, bits >>= 8, at += 8;
    }
    for (; k > 0; --k) bits &= bits - 1;
    return at + static_cast<uint64_t>(__builtin_ctzll(bits));
  }
  // The (n+1)-th highest set bit of `bits`, which has `count` (n < count):
  // a few dropped from the top, else counted from the bottom.
  [[gnu::always_inline]] static uint64_t select_high(uint64_t bits, uint64_t n, uint64_t count) noexcept {
    if (n < 4) {
      for (; n > 0; --n) bits ^= uint64_t{1} << (63 - __builtin_clzll(bits));
      return static_cast<uint64_t>(63 - __builtin_clzll(bits));
    }
    return select_low(bits, count - 1 - n);
  }
  // The block `thread` freed `j` frees ago (landmark j), if still in the window.
  uint64_t landmark(uint32_t thread, unsigned j, uint64_t next_id) const noexcept {
    const uint64_t v = landmarks_[thread % kThreadBuckets][j];
    return v != 0 && tracked(v - 1, next_id) ? v - 1 : kNoId;
  }
  // Version 3's only landmark: the block this thread freed last, if recent.
  uint64_t last_freed(uint32_t thread, uint64_t next_id) const noexcept {
    const uint64_t v = landmarks_[thread % kThreadBuckets][0];
    return v != 0 && known(v - 1, next_id) ? v - 1 : kNoId;
  }

  static constexpr uint64_t kWords = kLiveWindow / 64;

  Recent recent_[kRecentAllocs] = {};
  uint64_t live_[kWords] = {};  // bit (id % kLiveWindow): id is live
  // Per thread bucket, id + 1 of the blocks it freed last, most recent first
  // (0: none); version 3 keeps only recent ones.
  uint64_t landmarks_[kThreadBuckets][kLandmarks] = {};
  Freed freed_[kSizeClasses] = {};
  uint64_t class_prev_[kSizeClasses] = {};  // the last address allocated in each class
  uint64_t prev_addr_[kThreadBuckets] = {};
  uint64_t prev_size_[kThreadBuckets] = {};
  FreeFunc free_for_[kFuncCount] = {};  // the last free function seen for each allocating function
  FreeFunc last_free_;
  bool v3_refs_ = false;  // zero: version 4 (the encoder's state is all zero bytes)
};

// The block references' encoder side, inline: Encoder::free (its one caller
// per Free) inlines block_ref_v4, whose call and saved registers were ~15 of
// its ~130 instructions a free on (a)'s flush thread.

// The bitmap is a ring of kWords words; ids lo..hi-1 span words lo/64..(hi-1)/64
// (taken mod kWords), the first and last of them partly.
inline uint64_t AllocHistory::count_live(uint64_t lo, uint64_t hi, uint64_t cap) const noexcept {
  if (lo >= hi) return 0;
  // Downwards from hi, so that a capped count reads the words nearest hi.
  uint64_t w = (hi - 1) / 64;
  const uint64_t first = lo / 64;
  uint64_t bits = word_below(hi);
  uint64_t n = 0;
  // Uncapped (the default, a constant where this is inlined), the loop has no
  // test of the count: two instructions a word fewer.
  const bool capped = cap != ~uint64_t{0};
  while (w != first) {
    n += static_cast<uint64_t>(__builtin_popcountll(bits));
    if (capped && n >= cap) return n;
    bits = live_[--w % kWords];
  }
  return n + static_cast<uint64_t>(__builtin_popcountll(bits & (~uint64_t{0} << lo % 64)));
}

// For a live block among the last kRecentAllocs: the smaller of its kind-0
// reference and landmark `mark`'s (kinds 2 and 3; kNoId: none), the count
// shifted by `bits` (the version's kind bits). The shortest wins; ties go to
// the lower kind. Kind 0 never loses to kind 1 there (n0 <= next_id - 1 - id),
// so only kinds 0, 2 and 3 are counted, and no more than it takes to tell which
// is shortest. Both versions choose between these two the same way.
[[gnu::always_inline]] inline uint64_t AllocHistory::newest_or_mark(uint64_t id, uint64_t next_id, uint64_t mark,
                                                                    unsigned bits) const noexcept {
  if (mark == kNoId) return count_live(id + 1, next_id) << bits;
  if (id < mark) {
    // n0 = n3 + (live blocks above the landmark), the landmark itself being
    // dead: kind 3 wins exactly when there is one.
    const uint64_t n3 = count_live(id + 1, mark);
    return n3 << bits | (count_live(mark + 1, next_id, 1) ? 3 : 0);
  }
  // Kind 2 wins when n2 < n0. Count the shorter range first; the other count
  // need only go as far as that bound.
  if (next_id - id <= id - mark) {
    const uint64_t n0 = count_live(id + 1, next_id);
    if (n0 == 0) return 0;
    const uint64_t n2 = count_live(mark + 1, id, n0);
    return n2 < n0 ? n2 << bits | 2 : n0 << bits;
  }
  const uint64_t n2 = count_live(mark + 1, id);
  const uint64_t n0 = count_live(id + 1, next_id, n2 + 1);
  return n2 < n0 ? n2 << bits | 2 : n0 << bits;
}

// Version 4's (wire.h). Any reference that names the block reads back; the
// encoder's choice is its own (docs/FORMAT.md §5.6): the smaller of kind 0 and
// landmark 0's, as version 3 chose between its kinds, then, only if that still
// counts kFarSearchFrom live blocks or more (a reference of two bytes or
// more), landmarks 1 and 2's if smaller and within kFarSearchSpan ids (a word
// or two to count). The first two cost what version 3's did; the others serve
// the blocks freed in turn from a table, far below the newest and a few ids
// above the entry freed a free or two before. (Searching them within 4096 ids
// cost (a) 95 more instructions a free for 0.5% of the reference bytes.)
inline uint64_t AllocHistory::block_ref_v4(uint64_t id, uint64_t next_id, uint32_t thread) const noexcept {
  uint64_t best = (next_id - 1 - id) << kRefBits | 1;
  if (!tracked(id, next_id) || !live(id)) return best;
  // Landmark j's mark if it is within `span` ids of the block, else kNoId.
  const auto near = [&](unsigned j, uint64_t span) {
    const uint64_t mark = landmark(thread, j, next_id);
    return mark != kNoId && (id > mark ? id - mark : mark - id) <= span ? mark : kNoId;
  };
  // The live blocks between the block and landmark j's, or some count above `cap`.
  const auto from_mark = [&](uint64_t mark, unsigned j, uint64_t cap) {
    return id > mark ? count_live(mark + 1, id, cap) << kRefBits | (2 + 2 * j)
                     : count_live(id + 1, mark, cap) << kRefBits | (3 + 2 * j);
  };
  const uint64_t mark0 = near(0, kLandmarkSpan);
  if (known(id, next_id)) {
    best = newest_or_mark(id, next_id, mark0, kRefBits);
  } else if (mark0 != kNoId) {
    best = std::min(best, from_mark(mark0, 0, best >> kRefBits));
  }
  for (unsigned j = 1; j < kLandmarks && (best >> kRefBits) >= kFarSearchFrom; ++j)
    if (const uint64_t mark = near(j, kFarSearchSpan); mark != kNoId)
      best = std::min(best, from_mark(mark, j, best >> kRefBits));
  return best;
}

}  // namespace memloupe::format
