#include "recorder/unwind/fast_unwind.h"

#include <ucontext.h>

#include <cstddef>
#include <cstring>

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

inline Rule rule_for(uintptr_t key) {
  RuleCache& cache = rule_cache();
  if (const std::optional<Rule> hit = cache.find(key)) return *hit;
  const Rule computed = compute_rule(key);
  cache.insert(key, computed);
  return computed;
}

// Where the kernel's rt_sigframe keeps the interrupted registers: at the trampoline's
// frame, the stack pointer points at the ucontext (the handler's return popped
// pretcode, the word before it).
constexpr size_t greg_offset(int reg) {
  return offsetof(ucontext_t, uc_mcontext.gregs) + static_cast<size_t>(reg) * sizeof(greg_t);
}

}  // namespace

FastResult fast_unwind(const Regs& regs, uint64_t* out, size_t max_frames, size_t skip) noexcept {
  Span stack = stack_span(regs.sp);
  if (stack.end == 0) return {0, Outcome::kFallback};
  uintptr_t pc = regs.pc, sp = regs.sp, bp = regs.bp;
  // A return address points after its call, which may be the last instruction of its
  // function, so its rule is looked up at pc - 1; an interrupted pc (after a signal
  // frame) has not executed yet and is looked up exactly.
  bool exact_pc = false;
  bool own_frame = true;  // F's frame: stepped through, never written
  size_t n = 0;
  for (;;) {
    if (!own_frame && skip == 0 && n == max_frames) return {n, Outcome::kTruncated};
    const Rule rule = rule_for(exact_pc ? pc : pc - 1);
    if (!own_frame) {
      if (rule.kind == RuleKind::kUnknown) return {n, Outcome::kComplete};
      if (skip > 0) {
        --skip;
      } else {
        out[n++] = pc;
      }
    }
    own_frame = false;
    switch (rule.kind) {
      case RuleKind::kFrame: {
        const uintptr_t cfa = (rule.base == CfaBase::kRsp ? sp : bp) + rule.cfa_offset;
        // The CFA must move up the stack (this also bounds the walk) and the slots read
        // must be inside it; a frame that breaks this is the end of what we can trust.
        if (cfa <= sp || !stack.contains(cfa - 8, 8)) return {n, Outcome::kComplete};
        if (rule.rbp_slot != 0) {
          const uintptr_t slot = cfa - 8 * uintptr_t{rule.rbp_slot};
          if (!stack.contains(slot, 8)) return {n, Outcome::kComplete};
          bp = load(slot);
        }
        pc = load(cfa - 8);
        sp = cfa;
        exact_pc = false;
        if (pc == 0) return {n, Outcome::kComplete};
        break;
      }
      case RuleKind::kSignal: {
        if (!stack.contains(sp, sizeof(ucontext_t))) return {n, Outcome::kFallback};
        pc = load(sp + greg_offset(REG_RIP));
        bp = load(sp + greg_offset(REG_RBP));
        sp = load(sp + greg_offset(REG_RSP));
        exact_pc = true;
        // A handler on the alternate stack interrupted code on the thread's stack.
        if (!stack.contains(sp)) stack = stack_span(sp);
        if (stack.end == 0) return {n, Outcome::kFallback};
        break;
      }
      case RuleKind::kOutermost: return {n, Outcome::kComplete};
      case RuleKind::kUnknown:  // only F's own frame gets here: our code is unknown?
      case RuleKind::kFallback:
      case RuleKind::kEmpty: return {n, Outcome::kFallback};
    }
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
