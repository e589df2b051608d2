#include "recorder/snapshot/stack_frames.h"

#include "recorder/modules.h"
#include "recorder/unwind/eh_frame.h"
#include "recorder/unwind/rule.h"
#include "recorder/unwind/stack_memory.h"

namespace memloupe::recorder::snapshot {

using unwind_detail::CfaBase;
using unwind_detail::compute_rule;
using unwind_detail::load_stack_word;
using unwind_detail::Rule;
using unwind_detail::RuleKind;

// The taker's own frames lie within this many of the innermost.
constexpr size_t kOwnFramesSearched = 32;

size_t split_stack(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t stack_begin,
                   uintptr_t stack_end, bool skip_own, StackFrame* out, size_t cap) noexcept {
  size_t n = 0;
  if (cap == 0 || sp < stack_begin || sp >= stack_end) return 0;
  bool exact = true;  // the first pc was interrupted (or taken), not returned to
  while (n < cap) {
    // A return address's rule is the one at pc - 1 (it may end its function).
    const Rule r = compute_rule(exact ? pc : pc - 1);
    uintptr_t cfa = 0;
    if (r.kind == RuleKind::kFrame) {
      cfa = (r.base == CfaBase::kRbp ? bp : sp) + r.cfa_offset;
      if (cfa < sp + 8 || cfa > stack_end) cfa = 0;
    }
    if (cfa == 0 || n + 1 == cap) {
      out[n++] = {sp, stack_end, pc};
      break;
    }
    out[n++] = {sp, cfa, pc};
    if (r.rbp_slot != 0 && cfa - stack_begin >= 8u * r.rbp_slot) bp = load_stack_word(cfa - 8u * r.rbp_slot);
    pc = load_stack_word(cfa - 8);
    sp = cfa;
    exact = false;
    if (pc == 0 || sp >= stack_end) break;
  }
  if (!skip_own) return n;
  // The taker's frames: the recorder's, with libc's between them (the snapshot
  // runs inside dl_iterate_phdr). Drop everything up to the outermost of them.
  size_t drop = 0;
  for (size_t f = 0; f < n && f < kOwnFramesSearched; ++f)
    if (is_own_code(out[f].pc)) drop = f + 1;
  for (size_t f = drop; f < n; ++f) out[f - drop] = out[f];
  return n - drop;
}

}  // namespace memloupe::recorder::snapshot
