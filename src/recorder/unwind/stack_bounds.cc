#include "recorder/unwind/stack_bounds.h"

#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>

#include "recorder/unwind/proc_maps.h"

// The initial stack pointer of the process, exported by the dynamic loader.
extern "C" void* __libc_stack_end;

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr uintptr_t kPage = 4096;
// A stack that a guess says is larger than this is not believed (see own_stack).
constexpr uintptr_t kMaxStack = uintptr_t{256} << 20;

uintptr_t page_down(uintptr_t a) { return a & ~(kPage - 1); }
uintptr_t page_up(uintptr_t a) { return (a + kPage - 1) & ~(kPage - 1); }

Span altstack_span(uintptr_t sp) {
  stack_t ss;
  if (sigaltstack(nullptr, &ss) != 0 || (ss.ss_flags & SS_ONSTACK) == 0) return {};
  const auto begin = reinterpret_cast<uintptr_t>(ss.ss_sp);
  const Span s{begin, begin + ss.ss_size};
  return s.contains(sp) ? s : Span{};
}

}  // namespace

// initial-exec: the preload library is loaded at startup, so its TLS is static and
// reaching it is one %fs-relative load, with no __tls_get_addr (which may allocate).
constinit thread_local ThreadStack tls_stack MEMLOUPE_TLS_MODEL;

bool pages_readable(uintptr_t begin, uintptr_t end) noexcept {
  constexpr size_t kBatch = 64;
  static_assert(kBatch <= IOV_MAX);
  iovec remote[kBatch];
  char sink[kBatch];
  const iovec local{sink, sizeof sink};
  const pid_t self = getpid();
  for (uintptr_t page = page_down(begin); page < end;) {
    size_t n = 0;
    for (; n < kBatch && page < end; ++n, page += kPage) {
      remote[n] = iovec{reinterpret_cast<void*>(page), 1};
    }
    if (process_vm_readv(self, &local, 1, remote, n, 0) != static_cast<ssize_t>(n)) return false;
  }
  return true;
}

namespace {

// Where this thread's own stack should be, without reading /proc: glibc puts a
// thread's descriptor (pthread_self()) just above its stack and static TLS, and the
// main thread's stack ends just above __libc_stack_end. Of the two, the lowest one
// above sp; a stack bigger than kMaxStack is not believed. The caller verifies.
Span own_stack(uintptr_t sp) {
  const uintptr_t candidates[] = {reinterpret_cast<uintptr_t>(pthread_self()),
                                  page_up(reinterpret_cast<uintptr_t>(__libc_stack_end) + 1)};
  uintptr_t top = 0;
  for (const uintptr_t c : candidates) {
    if (c > sp && (top == 0 || c < top)) top = c;
  }
  if (top == 0 || top - sp > kMaxStack) return {};
  return Span{page_down(sp), top};
}

Span from_proc_maps(uintptr_t sp) {
  Mapping m;
  if (!find_mapping(sp, m) || !m.readable || !m.writable || !m.stack_like) return {};
  return Span{m.begin, m.end};
}

}  // namespace

Span stack_span_refresh(uintptr_t sp) noexcept {
  ThreadStack& t = tls_stack;
  const Span home = t.load();
  if (home.contains(sp)) return home;
  if (const Span alt = altstack_span(sp); alt.end != 0) return alt;
  if (t.refreshes >= kMaxStackRefreshes) return {};
  ++t.refreshes;
  Span fresh;
  if (home.end != 0 && sp < home.begin && home.end - sp <= kMaxStack &&
      pages_readable(page_down(sp), home.begin)) {
    fresh = Span{page_down(sp), home.end};  // the stack grew down since last time
  } else if (const Span guess = own_stack(sp);
             guess.end != 0 && pages_readable(guess.begin, guess.end)) {
    fresh = guess;
  } else {
    fresh = from_proc_maps(sp);  // not a glibc thread stack: ask the kernel's map
  }
  if (fresh.end == 0) return {};
  t.store(fresh);
  return fresh;
}

}  // namespace memloupe::recorder::unwind_detail
