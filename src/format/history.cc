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

// The words below or above select_down's and select_up's first (history.h).
// The reader resolves kind-0 and kind-3 references, often hundreds of ids
// below `hi` (a consumer thread freeing a producer's blocks), and kind-2 ones,
// up to kLandmarkSpan ids above the landmark: so whole words are skipped with
// one load and one popcount each, the partial last word masked in the loop.
uint64_t AllocHistory::select_down_from(uint64_t hi, uint64_t floor, uint64_t n) const noexcept {
  if (hi <= floor) return kNoId;
  uint64_t w = (hi - 1) / 64;  // word numbers count ids / 64, not ring positions
  const uint64_t last = floor / 64;
  uint64_t bits = word_below(hi);
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
    const WordUp w = word_up(lo, hi);
    const uint64_t count = static_cast<uint64_t>(__builtin_popcountll(w.bits));
    if (n < count) return lo + select_low(w.bits, n);
    n -= count;
    lo = w.to;
  }
  return kNoId;
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
