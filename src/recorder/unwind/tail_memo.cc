#include "recorder/unwind/tail_memo.h"

#include <emmintrin.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "format/cpu_features.h"
#include "recorder/unwind/stack_memory.h"

namespace memloupe::recorder::unwind_detail {
namespace {

constinit std::atomic<uint32_t> g_generation{1};
// Walk ids handed out to threads, kWalkIdBlock at a time (one atomic per block).
constexpr uint64_t kWalkIdBlock = 1 << 16;
constinit std::atomic<uint64_t> g_walk_ids{0};

// move_frames' long moves.
[[gnu::noinline]] void move_many_frames(MemoFrames& m, size_t to, size_t from, size_t n) {
  std::memmove(&m.sp[to], &m.sp[from], n * sizeof m.sp[0]);
  std::memmove(&m.pc[to], &m.pc[from], n * sizeof m.pc[0]);
  std::memmove(&m.bp[to], &m.bp[from], n * sizeof m.bp[0]);
  std::memmove(&m.rbp_slot[to], &m.rbp_slot[from], n * sizeof m.rbp_slot[0]);
  std::memmove(&m.rbp_based[to], &m.rbp_based[from], n * sizeof m.rbp_based[0]);
}

// Moves n frames from index `from` to index `to` (the ranges may overlap).
[[gnu::always_inline]] inline void move_frames(MemoFrames& m, size_t to, size_t from, size_t n) {
  // A splice moves the few frames the walk recorded before it found the memo
  // (under 3 on average on bench_stl_deep, none in 41% of its splices): five
  // memmove calls cost more than the copy, and so did a call to this loop
  // (~45 instructions a splice on bench_stl_deep, mostly the register saves
  // that the memmove path needs). Forwards, so `to < from` may overlap.
  if (n <= 8 && to < from) [[likely]] {
    for (size_t k = 0; k < n; ++k) {
      m.sp[to + k] = m.sp[from + k];
      m.pc[to + k] = m.pc[from + k];
      m.bp[to + k] = m.bp[from + k];
      m.rbp_slot[to + k] = m.rbp_slot[from + k];
      m.rbp_based[to + k] = m.rbp_based[from + k];
      asm("");  // a loop, not five memmove calls (GCC's loop distribution)
    }
    return;
  }
  move_many_frames(m, to, from, n);
}

// based_upto[] for memo frames `from` .. count - 1 (those before are unchanged).
void renumber(MemoFrames& m, size_t from) {
  unsigned n = from != 0 ? m.based_upto[from - 1] : 0;
  for (size_t i = from; i < m.count; ++i) {
    n += m.rbp_based[i] ? 1 : 0;
    m.based_upto[i] = static_cast<uint16_t>(n);
  }
}

}  // namespace

constinit thread_local ThreadMemo tls_memo MEMLOUPE_TLS_MODEL;
constinit std::atomic<bool> g_tail_memo_enabled{true};

void bump_memo_generation() noexcept { g_generation.fetch_add(1, std::memory_order_relaxed); }

void set_tail_memo_enabled(bool enabled) noexcept {
  g_tail_memo_enabled.store(enabled, std::memory_order_relaxed);
}

MemoStats memo_stats() noexcept { return tls_memo.stats; }

uint64_t MemoSession::mark_whole() noexcept {
  // The memo's frames are this walk's if it spliced (commit_splice) or recorded
  // frames (commit_fresh, which then moved them in).
  if (t_ == nullptr || !(spliced_ || recorded_ != 0) || !t_->m.stops) return 0;
  ThreadMemo& t = *t_;
  if (t.next_walk == t.walk_end) {
    t.next_walk = g_walk_ids.fetch_add(kWalkIdBlock, std::memory_order_relaxed) + 1;  // never 0
    t.walk_end = t.next_walk + kWalkIdBlock;
  }
  t.whole = t.next_walk++;
  return t.whole;
}

void MemoSession::begin(Span stack) noexcept {
  stack_ = stack;
  ThreadMemo& t = tls_memo;
  // A signal handler can only run to completion between these two statements, so it
  // either finds busy set or releases the memo before we take it.
  if (t.busy || !g_tail_memo_enabled.load(std::memory_order_relaxed)) return;
  t.busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_ = &t;
  recording_ = true;
  searching_ = t.m.count > 0 && t.generation == g_generation.load(std::memory_order_relaxed) &&
               t.span.end == stack.end && stack.begin <= t.span.begin;
  cursor_ = static_cast<long>(t.m.count) - 1;
}

MemoSession::~MemoSession() {
  if (t_ == nullptr) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_->busy = false;
}

namespace {

// The end of the first pass (returns_from, returns_from_avx2): steps i,
// i - 1, ..., down to `last`, one at a time, the words written from `out` on.
template <bool kCopy>
[[gnu::always_inline]] inline size_t returns_one_by_one(const MemoFrames& m, size_t i, size_t last, uint64_t* out) {
  for (; i > last; --i) {
    const uintptr_t a = load_stack_word(m.sp[i - 1] - 8);
    if (a != m.pc[i - 1]) break;
    if constexpr (kCopy) *out++ = a;
  }
  return i;
}

// The first pass of verify(): the steps r, r - 1, ... whose return-address
// slot holds the remembered caller, at most down to `last`; returns the first
// (outwards) that does not, or `last`. kCopy: also writes the words read, which
// are the callers' pcs while they match, to out[1], out[2], ... (and memo[r]'s
// pc to out[0]): the splice's copy of the remembered pcs, from the loads the
// check makes anyway. Past the returned step out[] holds garbage, up to
// out[r - last].
template <bool kCopy>
size_t returns_from(const MemoFrames& m, size_t r, size_t last, uint64_t* out) {
  // Every address read lies in [sp[r], span.end): sp grows outwards, sp[r] is the
  // walk's current sp (inside the span), and the memo's span is inside this one;
  // so slots past a failing step may be read too.
  size_t i = r;
  if constexpr (kCopy) *out++ = m.pc[r];
  // Four per test, in two vectors: each pair of slots is loaded into one
  // register and compared with the remembered pcs as one 16-byte load (the
  // memo's pcs are consecutive, outermost first, so the pair is swapped), and
  // the pair is stored as one. A frame costs its slot's load and its sp's: the
  // scalar pass loaded each pc too and stored each word (16 memory operations
  // per four frames, now 10 and 2 stores; the check is bound by them).
  while (i >= last + 4) {
    const __m128i ab = load_stack_pair(m.sp[i - 1] - 8, m.sp[i - 2] - 8);
    const __m128i cd = load_stack_pair(m.sp[i - 3] - 8, m.sp[i - 4] - 8);
    const __m128i pc_ab = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m.pc + i - 2)), 0x4e);
    const __m128i pc_cd = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m.pc + i - 4)), 0x4e);
    const __m128i differ = _mm_or_si128(_mm_xor_si128(ab, pc_ab), _mm_xor_si128(cd, pc_cd));
    if constexpr (kCopy) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), ab);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2), cd);
      out += 4;
    }
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(differ, _mm_setzero_si128())) != 0xffff) break;
    i -= 4;
  }
  if constexpr (kCopy) out = out - (i >= last + 4 ? 4 : 0);  // the block that failed is redone
  return returns_one_by_one<kCopy>(m, i, last, out);
}

// The slots of steps k - 3 .. k, lowest first, xor the pcs they must hold
// (zero if all hold); with kCopy also written innermost first at `at`.
template <bool kCopy>
__attribute__((target("avx2"), always_inline, no_sanitize("address"))) inline __m256i slot_block(
    const MemoFrames& m, size_t k, uint64_t* at) {
  const __m128i low = load_stack_pair(m.sp[k - 4] - 8, m.sp[k - 3] - 8);
  const __m128i high = load_stack_pair(m.sp[k - 2] - 8, m.sp[k - 1] - 8);
  const __m256i slots = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
  if constexpr (kCopy) _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), _mm256_permute4x64_epi64(slots, 0x1b));
  return _mm256_xor_si256(slots, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m.pc + k - 4)));
}

// returns_from with AVX2: the four slots of a test in one 256-bit register,
// lowest step first, which is the order of the remembered pcs they must hold
// (the memo is outermost first): one load and xor of the four pcs instead of
// two loads and two shuffles, one shuffle and store to write the slots
// innermost first instead of two stores, one vptest for the branch. 19
// instructions per four frames where the SSE2 loop takes 27; a deep splice
// checks ~70 frames on bench_stl_deep. Same reads, same result and the same
// writes to out[] as the SSE2 pass. (Not a gather of the four slots: fewer
// instructions still, but slower here; nor eight per test: fewer
// instructions, no fewer cycles, docs/RECORDER.md "The program thread on deep
// stacks".)
template <bool kCopy>
__attribute__((target("avx2"), no_sanitize("address"))) size_t returns_from_avx2(const MemoFrames& m, size_t r,
                                                                                size_t last, uint64_t* out) {
  size_t i = r;
  if constexpr (kCopy) *out++ = m.pc[r];
  for (; i >= last + 4; i -= 4) {
    const __m256i differ = slot_block<kCopy>(m, i, out);
    if (!_mm256_testz_si256(differ, differ)) break;
    if constexpr (kCopy) out += 4;
  }
  return returns_one_by_one<kCopy>(m, i, last, out);
}

constinit format::CachedFeature check_with_avx2{format::cpu_has_avx2};

}  // namespace

bool set_memo_check_avx2(bool on) noexcept { return check_with_avx2.force(on); }

// In two passes rather than one frame at a time. The return-address slots are
// independent loads: four are compared per test, so a deep splice costs a few
// instructions per frame. RBP matters only at the steps whose CFA is based on
// it, rare in code without frame pointers (most steps only save RBP, which
// changes nothing the walk reads unless such a step follows), so the second
// pass finds those sixteen at a time and works out RBP there from the nearest
// inner step that read a saved one. The result is the one-pass walk's: the
// first step (outwards) whose CFA base or return address differs, and RBP there.
Verified MemoSession::verify(size_t r, uintptr_t bp, size_t last, uint64_t* out) const noexcept {
  const MemoFrames& m = frames();
  // steps r .. fail + 1 return where remembered; step `fail` does not (or is `last`)
  size_t fail;
  if (check_with_avx2())
    fail = out != nullptr ? returns_from_avx2<true>(m, r, last, out) : returns_from_avx2<false>(m, r, last, nullptr);
  else
    fail = out != nullptr ? returns_from<true>(m, r, last, out) : returns_from<false>(m, r, last, nullptr);

  // RBP at step k (k < upto, called with decreasing k): read by the nearest
  // step inside k that reads a saved RBP, else as before. Each step is looked
  // at once at most.
  // The nearest step is usually the next one (most steps of code without
  // frame pointers save RBP: bench_stl_deep); past it the flags are looked at
  // sixteen at a time: a stack whose steps save no RBP (unwind_bench's
  // recursion) has none to find, and one at a time that scan was the most of
  // the check there. The bytes read past `upto` lie in the array (upto <=
  // kMemoCapacity, 16 below kMemoSlots) and are ignored.
  static_assert(kMemoCapacity + 16 <= kMemoSlots);
  size_t upto = r + 1;
  const auto bp_at = [&](size_t k) {
    if (k + 1 < upto && m.rbp_slot[k + 1] != 0) {
      bp = load_stack_word(m.sp[k] - 8 * uintptr_t{m.rbp_slot[k + 1]});
      upto = k + 1;
      return bp;
    }
    for (size_t j = k + 2; j < upto; j += 16) {
      const __m128i slots = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m.rbp_slot + j));
      const auto saves =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(slots, _mm_setzero_si128()))) ^ 0xffffu;
      if (saves != 0) {
        const size_t s = j + static_cast<size_t>(__builtin_ctz(saves));
        if (s < upto) bp = load_stack_word(m.sp[s - 1] - 8 * uintptr_t{m.rbp_slot[s]});
        break;
      }
    }
    upto = k + 1;
    return bp;
  };
  // The RBP-based steps in (fail, r], the highest first, sixteen at a time:
  // the window of 16 flags ending at k (or starting at 0), those above `fail`.
  // (Stepping the last partial window one flag at a time was a tenth of the
  // check's time on bench_stl_deep.)
  if (m.based_upto[r] == m.based_upto[fail]) return {fail, bp_at(fail)};  // none in (fail, r]
  for (size_t k = r; k > fail;) {
    const size_t base = k >= 15 ? k - 15 : 0;
    const __m128i based = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m.rbp_based + base));
    auto bits = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(based, _mm_setzero_si128()))) ^ 0xffffu;
    bits &= (2u << (k - base)) - 1;                         // at or below k
    if (fail >= base) bits &= ~((2u << (fail - base)) - 1);  // above fail
    if (bits == 0) {
      if (base <= fail) break;
      k = base - 1;
      continue;
    }
    k = base + 31 - static_cast<size_t>(__builtin_clz(bits));  // the highest RBP-based one
    if (bp_at(k) != m.bp[k]) return {k, bp};  // another CFA
    --k;
  }
  return {fail, bp_at(fail)};
}

void MemoSession::commit_splice(size_t r, size_t last) noexcept {
  if (t_ == nullptr) return;
  spliced_ = true;
  ThreadMemo& t = *t_;
  MemoFrames& m = t.m;
  ++t.stats.full;
  t.stats.reused += r + 1 - last;
  t.whole = 0;  // until mark_whole(): the memo's frames change
  t.span = stack_;  // holds the old frames' span and the new frames' reads
  // Frames outside [last, r] were not checked now; they stay, to be checked when
  // used. The recorded frames (at the top, the one that stepped into memo[r] lowest)
  // go right inside memo[r]. If recording stopped at the capacity, they do not reach
  // memo[r] (a chain with a gap would be wrong): they are the innermost frames, and
  // alone become the memo.
  const size_t n = recorded_;
  const size_t from = kMemoSlots - n;
  if (!recording_) {
    move_frames(m, 0, from, n);
    m.count = n;
    m.stops = false;
    renumber(m, 0);
    return;
  }
  // Deeper than the capacity: the outermost frames make room. A walk that needs
  // them steps on from memo[0]; the innermost ones are what every walk starts with.
  const size_t drop = r + 1 + n > kMemoCapacity ? r + 1 + n - kMemoCapacity : 0;
  if (drop != 0) {
    move_frames(m, 0, drop, r + 1 - drop);
    m.stops = false;
  }
  move_frames(m, r + 1 - drop, from, n);
  m.count = r + 1 + n - drop;
  renumber(m, drop != 0 ? 0 : r + 1);
}

void MemoSession::extend(uintptr_t sp, uintptr_t pc, uintptr_t bp) noexcept {
  searching_ = false;  // nothing outside memo[0] to find
  recording_ = false;
  if (t_ == nullptr) return;
  MemoFrames& m = t_->m;
  // A splice that dropped frames filled the memo; one whose recording stopped
  // at kRecordCapacity replaced it by the recorded frames, which do not reach
  // the walk's frame.
  if (m.count == 0 || m.count >= kMemoCapacity || m.sp[0] != sp || m.pc[0] != pc) return;
  extending_ = recording_ = true;
  recorded_ = 0;
  limit_ = std::min(kRecordCapacity, kMemoCapacity - m.count + 1);
  // memo[0] again, with the RBP this walk steps it with (see reject()).
  put(sp, pc, bp, m.rbp_slot[0], m.rbp_based[0]);
}

void MemoSession::commit_fresh(bool stops) noexcept {
  if (t_ == nullptr || recorded_ == 0) return;
  ThreadMemo& t = *t_;
  MemoFrames& m = t.m;
  if (extending_) {
    // The recorded frames, memo[0] the innermost of them, replace memo[0]: the
    // rest of the memo moves out of their way. Both stay outermost first.
    const size_t n = recorded_;
    move_frames(m, n, 1, m.count - 1);
    move_frames(m, 0, kMemoSlots - n, n);
    m.count += n - 1;
    m.stops = stops && recording_;
    t.whole = 0;
    renumber(m, 0);
    return;
  }
  if (spliced_) return;
  // Recorded innermost-first from the top down, the frames are already in
  // outermost-first order: move them to the bottom.
  move_frames(m, 0, kMemoSlots - recorded_, recorded_);
  m.count = recorded_;
  renumber(m, 0);
  // Only a stop right at the last recorded frame says the stack ends there.
  m.stops = stops && recording_;
  t.whole = 0;
  t.generation = g_generation.load(std::memory_order_relaxed);
  t.span = stack_;
}

}  // namespace memloupe::recorder::unwind_detail
