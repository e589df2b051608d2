#include "recorder/unwind/stack_bounds.h"

#include <signal.h>

#include <atomic>

#include "recorder/unwind/proc_maps.h"

namespace memloupe::recorder::unwind_detail {
namespace {

// The mapping holding this thread's own stack, as last read from /proc/self/maps.
//
// A signal handler on this thread may unwind (and refresh) while the interrupted code
// is in the middle of a refresh, so a reader must never see a span larger than a real
// mapping. Updates therefore go through an empty state: end := 0, begin := new,
// end := new. Any mix of old and new words a reader can observe is either the old
// span, an empty one (end == 0 contains nothing), or the new span.
struct ThreadStack {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  unsigned maps_reads = 0;  // racy increments under signals only lose counts

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

// initial-exec: the preload library is loaded at startup, so its TLS is static and
// reaching it is one %fs-relative load, with no __tls_get_addr (which may allocate).
constinit thread_local ThreadStack tls_stack __attribute__((tls_model("initial-exec")));

Span altstack_span(uintptr_t sp) {
  stack_t ss;
  if (sigaltstack(nullptr, &ss) != 0 || (ss.ss_flags & SS_ONSTACK) == 0) return {};
  const auto begin = reinterpret_cast<uintptr_t>(ss.ss_sp);
  const Span s{begin, begin + ss.ss_size};
  return s.contains(sp) ? s : Span{};
}

}  // namespace

Span stack_span(uintptr_t sp) noexcept {
  ThreadStack& t = tls_stack;
  const Span home = t.load();
  if (home.contains(sp)) return home;
  if (const Span alt = altstack_span(sp); alt.end != 0) return alt;
  if (t.maps_reads >= kMaxMapsReads) return {};
  ++t.maps_reads;
  Mapping m;
  if (!find_mapping(sp, m) || !m.readable || !m.writable || !m.stack_like) return {};
  const Span fresh{m.begin, m.end};
  t.store(fresh);
  return fresh;
}

}  // namespace memloupe::recorder::unwind_detail
