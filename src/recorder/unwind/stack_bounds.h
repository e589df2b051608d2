// Which memory the unwinder may read: the readable extent of the stack that a given
// stack pointer lies on. Stack slots are read only inside it, so a garbage frame
// pointer or CFA cannot make the unwinder fault.
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/tls_model.h"
#include "recorder/unwind/module_lookup.h"

namespace memloupe::recorder::unwind_detail {

// The readable stack memory of this thread, as last established.
//
// A signal handler on this thread may unwind (and refresh) while the interrupted code
// is in the middle of a refresh, so a reader must never see a span larger than what
// was verified. Updates therefore go through an empty state: end := 0, begin := new,
// end := new. Any mix of old and new words a reader can observe is either the old
// span, an empty one (end == 0 contains nothing), or the new span.
struct ThreadStack {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  unsigned refreshes = 0;  // racy increments under signals only lose counts

  Span load() const {
    const uintptr_t e = end.load(std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return Span{begin.load(std::memory_order_relaxed), e};
  }
  void store(Span s) {
    end.store(0, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    begin.store(s.begin, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    end.store(s.end, std::memory_order_relaxed);
  }
};

// constinit: no dynamic initialisation, so an access is one %fs-relative load (no
// TLS wrapper call).
extern constinit thread_local ThreadStack tls_stack MEMLOUPE_TLS_MODEL;

// The span of the calling thread's stack (or its signal alternate stack) containing
// `sp`, or an empty span if that cannot be established; the caller then hands the
// stack to libunwind. Every page of a returned span was readable when it was
// established (threads do not unmap their own live stack).
//
// Cost: nothing when `sp` is inside the span of the previous call (a per-thread
// cache). Otherwise (a thread's first unwind, or its stack grew): one
// process_vm_readv(2) probe per 64 pages of the glibc thread stack between sp and its
// top; /proc/self/maps (tens of microseconds) only for stacks glibc did not lay out;
// one sigaltstack(2) for code running on the signal alternate stack. At most
// kMaxStackRefreshes refreshes per thread.
// The usual case (sp inside the cached span) inline; the rest out of line.
Span stack_span_refresh(uintptr_t sp) noexcept;
inline Span stack_span(uintptr_t sp) noexcept {
  const Span home = tls_stack.load();
  return home.contains(sp) ? home : stack_span_refresh(sp);
}

inline constexpr unsigned kMaxStackRefreshes = 256;

// Whether every page of [begin, end) can be read now: the kernel copies one byte of
// each page for us (process_vm_readv on ourselves) and fails with EFAULT on an
// unmapped or unreadable one. No signal, no allocation; one syscall per 64 pages.
bool pages_readable(uintptr_t begin, uintptr_t end) noexcept;

}  // namespace memloupe::recorder::unwind_detail
