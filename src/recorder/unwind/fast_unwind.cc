#include "recorder/unwind/fast_unwind.h"

#include <ucontext.h>

#include <cstddef>

#include "recorder/unwind/eh_frame.h"
#include "recorder/unwind/rule_cache.h"
#include "recorder/unwind/stack_bounds.h"

namespace memloupe::recorder::unwind_detail {
namespace {

// Stack reads are bounds-checked by the caller; they may touch other frames' slots,
// which the sanitizer would not know are meant to be read.
__attribute__((no_sanitize("address"))) inline uintptr_t load(uintptr_t addr) {
  uintptr_t v;
  __builtin_memcpy(&v, reinterpret_cast<const void*>(addr), sizeof v);
  return v;
}

// Where the kernel's rt_sigframe keeps the interrupted registers: at the trampoline's
// frame, the stack pointer points at the ucontext (the handler's return popped
// pretcode, the word before it).
constexpr size_t greg_offset(int reg) {
  return offsetof(ucontext_t, uc_mcontext.gregs) + static_cast<size_t>(reg) * sizeof(greg_t);
}

// The walk's state. Invariant: stack.begin + 8 <= sp < stack.end, so that a CFA above
// sp has its return-address slot (CFA - 8) inside the stack.
struct Walk {
  uintptr_t pc, sp, bp;
  Span stack;
  bool exact_pc;  // pc was interrupted by a signal rather than a return address

  bool enter_stack() {
    stack = stack_span(sp);
    return stack.end != 0 && sp >= stack.begin + 8;
  }
};

enum class Step : uint8_t { kStepped, kStop, kFallback };

// One frame with a kFrame rule, from its packed bits (rule.h); the hot path.
inline Step step_frame(Walk& w, uint64_t packed) {
  const uintptr_t base = (packed & kRbpBaseBit) != 0 ? w.bp : w.sp;
  const uintptr_t cfa = base + (packed & kCfaOffsetMask);
  // sp < cfa <= stack.end, in one comparison (unsigned wrap-around makes a CFA at or
  // below sp huge). Moving up also guarantees the walk ends.
  if (cfa - w.sp - 1 >= w.stack.end - w.sp) return Step::kStop;
  const uintptr_t rbp_slot = (packed >> kRbpSlotShift) & 0xff;
  if (rbp_slot != 0) {
    if (cfa - w.stack.begin < 8 * rbp_slot) return Step::kStop;
    w.bp = load(cfa - 8 * rbp_slot);
  }
  w.pc = load(cfa - 8);
  w.sp = cfa;
  w.exact_pc = false;
  return w.pc != 0 ? Step::kStepped : Step::kStop;
}

// The kernel's signal frame: the interrupted registers are in the ucontext.
Step step_signal(Walk& w) {
  if (!w.stack.contains(w.sp, sizeof(ucontext_t))) return Step::kFallback;
  const uintptr_t uc = w.sp;
  w.pc = load(uc + greg_offset(REG_RIP));
  w.bp = load(uc + greg_offset(REG_RBP));
  w.sp = load(uc + greg_offset(REG_RSP));
  w.exact_pc = true;
  // A handler on the alternate stack interrupted code on the thread's stack.
  if (!(w.sp >= w.stack.begin + 8 && w.sp < w.stack.end) && !w.enter_stack()) {
    return Step::kFallback;
  }
  return Step::kStepped;
}

// The rule for a pc that missed the cache: computed from .eh_frame. Return addresses
// are cached under their own value (their rule is the one at pc - 1, see below);
// interrupted pcs, rare, are not cached, so the two kinds never share a key.
__attribute__((noinline)) uint64_t rule_on_miss(uintptr_t pc, bool exact_pc) {
  const Rule r = compute_rule(exact_pc ? pc : pc - 1);
  if (!exact_pc) g_rule_cache.insert(pc, r);
  return pack_rule(r);
}

inline RuleKind kind_of(uint64_t packed) { return static_cast<RuleKind>(packed & kKindMask); }

}  // namespace

FastResult fast_unwind(const Regs& regs, uint64_t* out, size_t max_frames, size_t skip) noexcept {
  if (max_frames == 0) return {0, Outcome::kTruncated};
  Walk w{regs.pc, regs.sp, regs.bp, {}, false};
  if (!w.enter_stack()) return {0, Outcome::kFallback};
  const RuleCache::Slot* slots = g_rule_cache.slots();
  // A return address points after its call, which may be the last instruction of its
  // function, so its rule is the one at pc - 1; an interrupted pc (after a signal
  // frame) has not executed yet and its rule is the one at pc. The first pc (inside
  // F) was taken mid-instruction-stream, so pc - 1 is inside F too.
  size_t n = 0;
  bool own_frame = true;  // F's frame is stepped through, never written
  for (;;) {
    uint64_t packed = w.exact_pc ? 0 : RuleCache::find_entry(slots, w.pc);
    if (packed == 0) {
      packed = rule_on_miss(w.pc, w.exact_pc);
      slots = g_rule_cache.slots();  // the first miss maps the table
    }
    if (!own_frame) {
      // Never write an address that lies in no module (garbage, or JIT code).
      if (kind_of(packed) == RuleKind::kUnknown) return {n, Outcome::kComplete};
      if (skip > 0) {
        --skip;
      } else {
        out[n++] = w.pc;
        if (n == max_frames) return {n, Outcome::kTruncated};
      }
    }
    own_frame = false;
    Step step;
    switch (kind_of(packed)) {
      case RuleKind::kFrame: step = step_frame(w, packed); break;
      case RuleKind::kSignal: step = step_signal(w); break;
      case RuleKind::kOutermost:
      case RuleKind::kNoInfo: step = Step::kStop; break;
      default: step = Step::kFallback; break;  // kFallback; kUnknown for F itself
    }
    if (step == Step::kStop) return {n, Outcome::kComplete};
    if (step == Step::kFallback) return {n, Outcome::kFallback};
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
