// Every thread that ever called a hook has a ThreadSlot; the flush thread sums the
// slots' counters into the trace's exact CallTotals.
//
//   first_ ──► [64 slots | next] ──► [64 slots | next] ──► null
//              static storage        mmap'd when the first slab is full
//
// Slabs are never freed and only appended (atomic `next`), so readers walk them
// without a lock. A slot is claimed with a compare-exchange and released when its
// thread exits; its counters stay, so sums over all slots are totals since start.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "format/events.h"
#include "recorder/thread_state.h"

namespace memloupe::recorder {

class ThreadRegistry {
 public:
  constexpr ThreadRegistry() noexcept = default;

  // A free slot for the calling thread, or nullptr if no memory is left.
  ThreadSlot* claim(uintptr_t pthread, uint32_t os_tid) noexcept;
  void release(ThreadSlot* slot) noexcept;

  // Adds every slot's counters into `totals`.
  void sum(format::CallTotals& totals) const noexcept;

  // The claimed slot owned by `pthread`, or nullptr.
  ThreadSlot* find(uintptr_t pthread) noexcept;
  // The claimed slot of the thread with kernel id `os_tid`, or nullptr.
  ThreadSlot* find_tid(uint32_t os_tid) noexcept;

  // In a fork child: the parent's other threads are gone; forget them all and
  // zero the counters, as the child's trace starts from nothing.
  void reset_for_child() noexcept;

  // Every claimed slot (a later attach announces the threads it already knows).
  template <class F>
  void for_each_claimed(F f) noexcept {
    for_each_slot([&](ThreadSlot& slot) {
      if (slot.claimed.load(std::memory_order_acquire)) f(slot);
    });
  }

 private:
  static constexpr size_t kSlabSlots = 64;
  struct Slab {
    ThreadSlot slots[kSlabSlots];
    std::atomic<Slab*> next{nullptr};
  };
  template <class F>
  void for_each_slot(F f) const noexcept {
    for (const Slab* s = &first_; s != nullptr; s = s->next.load(std::memory_order_acquire))
      for (const ThreadSlot& slot : s->slots) f(const_cast<ThreadSlot&>(slot));
  }

  Slab first_;
};

}  // namespace memloupe::recorder
