#include "format/history.h"

#include <algorithm>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace memloupe::format {

static_assert(kRecentAllocs % 64 == 0 && kLiveWindow % kRecentAllocs == 0);
static_assert(kLandmarks * 2 + 2 == 1u << kRefBits);

// ---- addresses ----

uint64_t AllocHistory::freed_address(uint64_t size, uint32_t thread, unsigned k) const noexcept {
  const Freed& f = freed_[size_class(size)];
  const uint8_t t = static_cast<uint8_t>(thread % kThreadBuckets);
  for (unsigned i = f.depth; i-- > 0;)
    if (f.thread[i] == t && k-- == 0) return f.addr[i];
  return 0;
}

// Bit i of each mask: entry i of `f` (i < depth) holds `address` / was freed by
// thread bucket `t`. The encoder asks of every allocation (Mode::All) where its
// address is in its class's list; comparing all 16 entries at once and answering
// with bit operations costs a third of an entry-by-entry scan with its
// unpredictable branches.
struct AllocHistory::FreedMasks {
  uint32_t addr;
  uint32_t thread;
};
AllocHistory::FreedMasks AllocHistory::freed_masks(const Freed& f, uint64_t address,
                                                   uint8_t t) noexcept {
  static_assert(kFreedDepth == 16);
  const uint32_t valid = (uint32_t{1} << f.depth) - 1;
  uint32_t a = 0, th = 0;
#if defined(__SSE2__)
  const __m128i key = _mm_set1_epi64x(static_cast<long long>(address));
  for (unsigned i = 0; i < kFreedDepth; i += 2) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f.addr + i));
    __m128i eq = _mm_cmpeq_epi32(v, key);  // SSE2 has no 64-bit compare: both halves
    eq = _mm_and_si128(eq, _mm_shuffle_epi32(eq, 0xb1));
    a |= static_cast<uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(eq))) << i;
  }
  const __m128i threads = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f.thread));
  th = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(threads, _mm_set1_epi8(static_cast<char>(t)))));
#else
  for (unsigned i = 0; i < kFreedDepth; ++i) {
    a |= uint32_t{f.addr[i] == address} << i;
    th |= uint32_t{f.thread[i] == t} << i;
  }
#endif
  return {a & valid, th & valid};
}

namespace {
unsigned top_bit(uint32_t m) noexcept { return 31 - static_cast<unsigned>(__builtin_clz(m)); }
}  // namespace

// Scanning from the newest entry: the first of the thread's own entries holding
// the address is the match, its index the number of the thread's entries above
// it; the newest entry holding the address (anyone's) is the one to forget.
AllocHistory::FreedMatch AllocHistory::find_freed(uint64_t size, uint32_t thread,
                                                  uint64_t address) const noexcept {
  const FreedMasks m =
      freed_masks(freed_[size_class(size)], address, static_cast<uint8_t>(thread % kThreadBuckets));
  const unsigned newest = m.addr ? top_bit(m.addr) : kNone;
  const uint32_t own = m.addr & m.thread;
  if (own == 0) return {kNone, newest};
  const unsigned i = top_bit(own);
  return {static_cast<unsigned>(__builtin_popcount(m.thread >> (i + 1))), newest};
}

void AllocHistory::alloc_address(unsigned cls, uint64_t size, uint64_t address, uint32_t thread,
                                 unsigned newest) noexcept {
  // The block is in use again: forget it as freed (whoever freed it).
  Freed& f = freed_[cls];
  if (newest == kScan) {
    const uint32_t a = freed_masks(f, address, 0).addr;
    newest = a ? top_bit(a) : kNone;
  }
  if (newest != kNone) {
    for (unsigned j = newest + 1; j < f.depth; ++j) {
      f.addr[j - 1] = f.addr[j];
      f.thread[j - 1] = f.thread[j];
    }
    --f.depth;
  }
  class_prev_[cls] = address;
  prev_addr_[thread % kThreadBuckets] = address;
  prev_size_[thread % kThreadBuckets] = size;
}

// ---- block references ----

// The bitmap is a ring of kWords words; ids lo..hi-1 span words lo/64..(hi-1)/64
// (taken mod kWords), the first and last of them partly.
inline uint64_t AllocHistory::count_live(uint64_t lo, uint64_t hi, uint64_t cap) const noexcept {
  if (lo >= hi) return 0;
  // Downwards from hi, so that a capped count reads the words nearest hi.
  uint64_t w = (hi - 1) / 64;
  const uint64_t first = lo / 64;
  uint64_t bits = live_[w % kWords] & (~uint64_t{0} >> (63 - (hi - 1) % 64));
  uint64_t n = 0;
  while (w != first) {
    n += static_cast<uint64_t>(__builtin_popcountll(bits));
    if (n >= cap) return n;
    bits = live_[--w % kWords];
  }
  return n + static_cast<uint64_t>(__builtin_popcountll(bits & (~uint64_t{0} << lo % 64)));
}

// The words below or above select_down's and select_up's first (history.h).
// The reader resolves kind-0 and kind-3 references, often hundreds of ids
// below `hi` (a consumer thread freeing a producer's blocks), and kind-2 ones,
// up to kLandmarkSpan ids above the landmark: so whole words are skipped with
// one load and one popcount each, the partial last word masked in the loop.
uint64_t AllocHistory::select_down_from(uint64_t hi, uint64_t floor, uint64_t n) const noexcept {
  if (hi <= floor) return kNoId;
  uint64_t w = (hi - 1) / 64;  // word numbers count ids / 64, not ring positions
  const uint64_t last = floor / 64;
  uint64_t bits = live_[w % kWords] & (~uint64_t{0} >> (63 - (hi - 1) % 64));
  for (;;) {
    if (w == last) bits &= ~uint64_t{0} << floor % 64;
    const auto count = static_cast<uint64_t>(__builtin_popcountll(bits));
    if (n < count) return w * 64 + select_high(bits, n, count);
    if (w == last) return kNoId;
    n -= count;
    bits = live_[--w % kWords];
  }
}

uint64_t AllocHistory::select_up_from(uint64_t lo, uint64_t hi, uint64_t n) const noexcept {
  while (lo < hi) {
    const uint64_t word_end = (lo & ~uint64_t{63}) + 64;
    const uint64_t to = word_end < hi ? word_end : hi;
    uint64_t bits = live_[(lo % kLiveWindow) / 64] >> (lo % 64);
    if (to - lo < 64) bits &= (uint64_t{1} << (to - lo)) - 1;
    const uint64_t count = static_cast<uint64_t>(__builtin_popcountll(bits));
    if (n < count) return lo + select_low(bits, n);
    n -= count;
    lo = to;
  }
  return kNoId;
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

// Version 3's references (2 low bits): 0 live rank below the newest, 1
// relative id, 2 live rank above this thread's last freed block, 3 live rank
// below it, all in the last kRecentAllocs allocations.
uint64_t AllocHistory::block_ref_v3(uint64_t id, uint64_t next_id, uint32_t thread) const noexcept {
  if (!known(id, next_id) || !live(id)) return (next_id - 1 - id) << kRefBitsV3 | 1;
  return newest_or_mark(id, next_id, last_freed(thread, next_id), kRefBitsV3);
}

uint64_t AllocHistory::resolve_ref_v3(uint64_t ref, uint64_t next_id, uint32_t thread) const noexcept {
  const uint64_t n = ref >> kRefBitsV3;
  const uint64_t floor = recent_floor(next_id);
  switch (ref & 3) {
    case 0:
      return select_down(next_id, floor, n);
    case 1:
      return n < next_id ? next_id - 1 - n : kNoId;
    default: {
      const uint64_t lf = last_freed(thread, next_id);
      if (lf == kNoId) return kNoId;
      return (ref & 3) == 2 ? select_up(lf + 1, next_id, n) : select_down(lf, floor, n);
    }
  }
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
uint64_t AllocHistory::block_ref_v4(uint64_t id, uint64_t next_id, uint32_t thread) const noexcept {
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

void AllocHistory::free_address(const Recent& r, uint32_t thread) noexcept {
  Freed& f = freed_[r.cls];
  if (f.depth == kFreedDepth) {  // drop the oldest (fixed sizes: a few vector moves)
    std::memmove(f.addr, f.addr + 1, (kFreedDepth - 1) * sizeof(f.addr[0]));
    std::memmove(f.thread, f.thread + 1, kFreedDepth - 1);
    --f.depth;
  }
  f.addr[f.depth] = r.address;
  f.thread[f.depth++] = static_cast<uint8_t>(thread % kThreadBuckets);
}

}  // namespace memloupe::format
