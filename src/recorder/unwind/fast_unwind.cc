#include "recorder/unwind/fast_unwind.h"

#include <emmintrin.h>
#include <ucontext.h>

#include <algorithm>
#include <cstddef>

#include "recorder/unwind/eh_frame.h"
#include "recorder/unwind/rule_cache.h"
#include "recorder/unwind/stack_bounds.h"
#include "recorder/unwind/stack_memory.h"
#include "recorder/unwind/tail_memo.h"

namespace memloupe::recorder::unwind_detail {
namespace {

inline uintptr_t load(uintptr_t addr) { return load_stack_word(addr); }

// Where the kernel's rt_sigframe keeps the interrupted registers: at the trampoline's
// frame, the stack pointer points at the ucontext (the handler's return popped
// pretcode, the word before it).
constexpr size_t greg_offset(int reg) {
  return offsetof(ucontext_t, uc_mcontext.gregs) + static_cast<size_t>(reg) * sizeof(greg_t);
}

// The walk's state. Invariant: stack.begin <= sp and sp + 8 <= stack.end. A frame's
// return-address slot (CFA - 8) lies at or above its callee's sp, so every CFA
// accepted in [sp + 8, stack.end - 8] has its slot inside the stack.
struct Walk {
  uintptr_t pc, sp, bp;
  Span stack;
  bool exact_pc;  // pc was interrupted by a signal rather than a return address

  bool on_stack() const { return sp >= stack.begin && sp < stack.end && stack.end - sp >= 8; }
  bool enter_stack() {
    stack = stack_span(sp);
    return stack.end != 0 && on_stack();
  }
};

enum class Step : uint8_t { kStepped, kStop, kFallback };

// One frame with a kFrame rule, from its packed bits (rule.h); the hot path.
[[gnu::always_inline]] inline Step step_frame(Walk& w, uint64_t packed) {
  const uintptr_t base = (packed & kRbpBaseBit) != 0 ? w.bp : w.sp;
  const uintptr_t cfa = base + (packed & kCfaOffsetMask);
  // Moving up (by at least the return address) also guarantees the walk ends.
  if (cfa < w.sp + 8 || cfa > w.stack.end - 8) return Step::kStop;
  const uintptr_t rbp_slot = (packed >> kRbpSlotShift) & 0xff;
  if (rbp_slot != 0) {
    if (cfa - w.stack.begin < 8 * rbp_slot) return Step::kStop;
    w.bp = load(cfa - 8 * rbp_slot);
  }
  w.pc = load(cfa - 8);
  w.sp = cfa;
  return w.pc != 0 ? Step::kStepped : Step::kStop;
}

// The kernel's signal frame: the interrupted registers are in the ucontext.
__attribute__((noinline)) Step step_signal(Walk& w) {
  if (!w.stack.contains(w.sp, sizeof(ucontext_t))) return Step::kFallback;
  const uintptr_t uc = w.sp;
  w.pc = load(uc + greg_offset(REG_RIP));
  w.bp = load(uc + greg_offset(REG_RBP));
  w.sp = load(uc + greg_offset(REG_RSP));
  w.exact_pc = true;
  // A handler on the alternate stack interrupted code on the thread's stack.
  if (!w.on_stack() && !w.enter_stack()) {
    return Step::kFallback;
  }
  return Step::kStepped;
}

// The rule for a pc that missed the cache: computed from .eh_frame. Return addresses
// are cached under their own value (their rule is the one at pc - 1, see rule_of);
// interrupted pcs, rare, are not cached, so the two kinds never share a key.
__attribute__((noinline)) uint64_t rule_on_miss(uintptr_t pc, bool exact_pc) {
  const Rule r = compute_rule(exact_pc ? pc : pc - 1);
  if (!exact_pc) g_rule_cache.insert(pc, r);
  return pack_rule(r);
}

inline RuleKind kind_of(uint64_t packed) { return static_cast<RuleKind>(packed & kKindMask); }

// The packed rule for the walk's pc, from the cache or (on a miss) from .eh_frame.
// A return address points after its call, which may be the last instruction of its
// function, so its rule is the one at pc - 1; an interrupted pc (after a signal
// frame) has not executed yet and its rule is the one at pc. The first pc (inside F)
// was taken mid-instruction-stream, so pc - 1 is inside F too.
inline uint64_t rule_of(const Walk& w, const RuleCache::Slot*& slots) {
  uint64_t packed = w.exact_pc ? 0 : RuleCache::find_entry(slots, w.pc);
  if (packed == 0) [[unlikely]] {
    packed = rule_on_miss(w.pc, w.exact_pc);
    slots = g_rule_cache.slots();  // the first miss maps the table
  }
  return packed;
}

// Steps the walk's frame by its rule: kStop after an outermost frame (or one that no
// CFI covers), kFallback for a frame only libunwind can step (or one in no module).
[[gnu::always_inline]] inline Step step_by(Walk& w, uint64_t packed) {
  switch (kind_of(packed)) {
    case RuleKind::kFrame:
      w.exact_pc = false;  // a return address (the hot loop never has an exact pc)
      return step_frame(w, packed);
    case RuleKind::kSignal: {
      // Through a copy, so that no reference to the walk's state escapes the hot loop
      // (which keeps it in registers).
      Walk copy = w;
      const Step s = step_signal(copy);
      w = copy;
      return s;
    }
    case RuleKind::kOutermost:
    case RuleKind::kNoInfo: return Step::kStop;
    default: return Step::kFallback;
  }
}

inline Outcome outcome_of(Step s) {
  return s == Step::kStop ? Outcome::kComplete : Outcome::kFallback;
}

// dst[j] = src[n - 1 - j] for j < n: the memo is outermost first, a backtrace
// innermost first. Two frames per SSE2 shuffle: a splice copies dozens of frames,
// and frame by frame this copy was a third of the walk's instructions on deep
// stacks (bench_stl_deep).
inline void copy_reversed(uint64_t* dst, const uint64_t* src, size_t n) {
  size_t j = 0;
  for (; j + 2 <= n; j += 2) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + n - 2 - j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j), _mm_shuffle_epi32(v, 0x4e));
  }
  if (j < n) dst[j] = src[0];
}

// Writes addresses to out[], first dropping `skip` of them.
struct Emitter {
  uint64_t* out;
  size_t max_frames, skip, n = 0;
  UnwindShare* share = nullptr;  // fast_unwind's

  // False once out[] is full.
  bool put(uintptr_t pc) {
    if (skip > 0) [[unlikely]] {
      --skip;
      return true;
    }
    out[n++] = pc;
    return n < max_frames;
  }
  // How many more put() calls can be made.
  size_t remaining() const { return skip + (max_frames - n); }
};

// One word of the hot loop's state, as a scalar load (see walk_on).
template <class T>
[[gnu::always_inline]] inline T load_word(const T& v) {
  T x = v;
  asm("" : "+r"(x));
  return x;
}

// The general walk: every kind of frame, and this thread's memo from frame
// `memo_from` above F on. `written` frames above F have been written (or
// skipped) before; `write` is false if the current frame is F itself. Per frame it
// searches the memo for the frame (same sp and pc); before a match the frame is
// recorded, at a match the remembered frames above it are reused.
__attribute__((noinline)) FastResult walk_on(const Walk& from, const Emitter& em_from,
                                             const RuleCache::Slot* slots, bool write,
                                             size_t written, size_t memo_from) {
  // Field by field: the caller stored them as words, and a copy of the whole
  // struct was made of 16-byte loads, which the store buffer cannot forward
  // from two 8-byte stores (a stall at every walk's entry).
  Walk w{load_word(from.pc), load_word(from.sp), load_word(from.bp),
         {load_word(from.stack.begin), load_word(from.stack.end)}, from.exact_pc};
  Emitter em{em_from.out, load_word(em_from.max_frames), load_word(em_from.skip), load_word(em_from.n),
             load_word(em_from.share)};
  MemoSession memo;
  bool memo_begun = false;
  for (;;) {
    if (!memo_begun && written >= memo_from) {
      memo.begin(w.stack);
      memo_begun = true;
    }
    if (write && !w.exact_pc) {
      // A frame the previous walk of this thread also met: reuse what lies above it,
      // checking only as many frames as will be written.
      if (const int found = memo.find(w.sp, w.pc); found >= 0) {
        memo.found_at(written, memo_from);
        const auto r = static_cast<size_t>(found);
        const MemoFrames& m = memo.frames();
        // Frames r, r - 1, ..., 0 are available; write at most em.remaining().
        const size_t last = em.remaining() < r + 1 ? r + 1 - em.remaining() : 0;
        // Frames r..good are what walking would give: write m[r], ..., m[good],
        // as many as fit. With nothing to skip (the recorder's case) they all
        // fit (r + 1 - last <= em.remaining()), and the check writes them as
        // it reads them.
        Verified v{};
        if (em.skip == 0) {
          v = memo.verify(r, w.bp, last, em.out + em.n);
          em.n += r + 1 - v.last_good;
        } else {
          v = memo.verify(r, w.bp, last);
          size_t i = r + 1;
          for (; i > v.last_good && em.skip > 0; --i) --em.skip;
          const size_t fit = std::min(i - v.last_good, em.max_frames - em.n);
          copy_reversed(em.out + em.n, m.pc + i - fit, fit);
          em.n += fit;
        }
        const size_t good = v.last_good;
        const size_t from_memo = r + 1 - good;  // frames written from the memo (skip 0) or skipped
        written += r + 1 - good;
        const bool full = em.n == em.max_frames;
        // Before the commit, which moves the memo's frames.
        const bool ends_here = good == 0 && m.stops;
        w.sp = m.sp[good];
        w.pc = m.pc[good];
        w.bp = v.bp;
        if (good == last) {
          const uint64_t previous = memo.whole();  // before the commit, which clears it
          memo.commit_splice(r, last);
          if (full) return {em.n, Outcome::kTruncated};
          if (ends_here) {
            // The output ends with memo[r], ..., memo[0] (fewer if some were
            // skipped), the outermost frames of the memo's whole walk, if any.
            // Only a walk whose caller takes the count marks itself (ids are
            // for the staging ring's copies): unwind_here's walks stay as cheap.
            if (em.share != nullptr) *em.share = {memo.mark_whole(), previous, std::min(from_memo, em.n)};
            return {em.n, Outcome::kComplete};
          }
          // Not full, so last == 0: the stack goes on past memo[0] (its outer
          // frames went to a deeper stack); the frames stepped from here on
          // extend the memo outwards.
          memo.extend(w.sp, w.pc, v.bp);
        } else {
          // Another caller above an equal frame. Dropping the memo here cost a
          // whole walk next time (on bench_stl_deep 13% of the frames found had
          // another caller within 2 frames); the frames that checked out are this
          // walk's, and further out the stacks meet again.
          memo.reject(r, good, v.bp);
          if (full) {
            memo.commit_fresh(false);
            return {em.n, Outcome::kTruncated};
          }
        }
        // Step on from the outermost frame that checked out (already written).
        write = false;
      }
    }
    const uint64_t packed = rule_of(w, slots);
    const RuleKind kind = kind_of(packed);
    if (write) {
      // Never write an address that lies in no module (garbage, or JIT code).
      if (kind == RuleKind::kUnknown) {
        memo.commit_fresh(false);
        return {em.n, Outcome::kComplete};
      }
      if (!w.exact_pc) memo.record(w.sp, w.pc, w.bp, static_cast<uint32_t>(packed));
      ++written;
      if (!em.put(w.pc)) {
        memo.commit_fresh(false);
        return {em.n, Outcome::kTruncated};
      }
    }
    write = true;
    if (kind == RuleKind::kSignal) memo.stop();  // the memo holds frames of one stack
    const Step step = step_by(w, packed);
    if (step != Step::kStepped) {
      // Only a frame whose own rule ends the stack says the stack ends there.
      const bool stops = kind == RuleKind::kOutermost || kind == RuleKind::kNoInfo;
      memo.commit_fresh(stops);
      if (stops && em.share != nullptr) em.share->walk = memo.mark_whole();
      return {em.n, outcome_of(step)};
    }
  }
}

// Hands the hot loop's state to walk_on through copies, so that no reference to
// the hot loop's own variables escapes (they stay in registers). Passing the
// structs by value instead made the compiler spill them with 8-byte stores and copy
// them into the argument area with 16-byte loads, which the store buffer cannot
// forward: a stall of tens of cycles per walk.
[[gnu::always_inline]] inline FastResult continue_walk(Walk w, Emitter em,
                                                       const RuleCache::Slot* slots, bool write,
                                                       size_t written, size_t memo_from) {
  const Walk w_copy = w;
  const Emitter em_copy = em;
  return walk_on(w_copy, em_copy, slots, write, written, memo_from);
}

}  // namespace

FastResult fast_unwind(const Regs& regs, uint64_t* out, size_t max_frames, size_t skip,
                       UnwindShare* share) noexcept {
  if (max_frames == 0) return {0, Outcome::kTruncated};
  Walk w{regs.pc, regs.sp, regs.bp, {}, false};
  if (!w.enter_stack()) return {0, Outcome::kFallback};
  const RuleCache::Slot* slots = g_rule_cache.slots();
  Emitter em{out, max_frames, skip, 0, share};
  // The hot loop: plain frames (kFrame rules found in the cache) up to the memo's
  // depth, per frame one lookup, one write, one step. Everything else (a miss, a
  // signal frame, the end of the stack, the memo) continues in walk_on. F's own
  // frame is stepped through, never written.
  // With nothing to skip (the recorder's case), frames written = em.n.
  uint64_t packed = RuleCache::find_entry(slots, w.pc);
  const size_t memo_from = memo_start_depth();
  if (kind_of(packed) != RuleKind::kFrame || skip != 0) {
    return continue_walk(w, em, slots, false, 0, memo_from);
  }
  if (step_frame(w, packed) != Step::kStepped) return {0, Outcome::kComplete};
  // The loop ends at the memo's depth or a full out[], whichever comes first:
  // one test per frame for both (two, and a spilled bound, cost ~3
  // instructions a frame).
  const size_t limit = memo_from < max_frames ? memo_from : max_frames;
  if (limit == 0) return continue_walk(w, em, slots, true, 0, memo_from);
  for (;;) {
    packed = RuleCache::find_entry(slots, w.pc);
    if (kind_of(packed) != RuleKind::kFrame) [[unlikely]] {
      // The end of most stacks (_start, clone3) ends the walk here; no memo yet
      // (em.n < limit).
      if (kind_of(packed) == RuleKind::kOutermost) {
        out[em.n++] = w.pc;
        return {em.n, em.n < max_frames ? Outcome::kComplete : Outcome::kTruncated};
      }
      return continue_walk(w, em, slots, true, em.n, memo_from);
    }
    out[em.n++] = w.pc;
    if (em.n == limit) [[unlikely]] {
      if (em.n == max_frames) return {em.n, Outcome::kTruncated};
      // At the memo's depth: the general loop goes on from the next frame.
      if (step_frame(w, packed) != Step::kStepped) return {em.n, Outcome::kComplete};
      return continue_walk(w, em, slots, true, em.n, memo_from);
    }
    if (step_frame(w, packed) != Step::kStepped) return {em.n, Outcome::kComplete};
  }
}

__attribute__((noinline)) FastResult fast_unwind_here(uint64_t* out, size_t max_frames,
                                                      size_t skip) noexcept {
  Regs regs;
  MEMLOUPE_CAPTURE_REGS(regs);
  const FastResult r = fast_unwind(regs, out, max_frames, skip);
  asm volatile("" ::: "memory");  // keep this frame: its return address is out[0]
  return r;
}

}  // namespace memloupe::recorder::unwind_detail
