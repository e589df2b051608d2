#include "recorder/thread_registry.h"

#include <new>

#include "recorder/sys.h"

namespace memloupe::recorder {

ThreadSlot* ThreadRegistry::claim(uintptr_t pthread, uint32_t os_tid) noexcept {
  for (Slab* s = &first_;;) {
    for (ThreadSlot& slot : s->slots) {
      uint32_t expected = 0;
      if (slot.claimed.load(std::memory_order_relaxed) == 0 &&
          slot.claimed.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        slot.pthread = pthread;
        slot.os_tid = os_tid;
        slot.announced = false;
        return &slot;
      }
    }
    Slab* next = s->next.load(std::memory_order_acquire);
    if (next == nullptr) {
      // Slabs are never unmapped: another thread may be walking this one.
      Mapping m = Mapping::anonymous(sizeof(Slab));
      if (!m) return nullptr;
      Slab* fresh = new (m.data()) Slab;
      if (s->next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel)) {
        m.abandon();
        next = fresh;
      }  // else: lost the race; `next` is the winner's slab and `m` unmaps ours
    }
    s = next;
  }
}

void ThreadRegistry::release(ThreadSlot* slot) noexcept {
  slot->pthread = 0;
  slot->claimed.store(0, std::memory_order_release);
}

void ThreadRegistry::sum(format::CallTotals& totals) const noexcept {
  for_each_slot([&](const ThreadSlot& slot) {
    for (unsigned f = 0; f < format::kFuncCount; ++f) {
      totals.totals[f].calls += Counters::read(slot.counters.calls[f]);
      totals.totals[f].bytes += Counters::read(slot.counters.bytes[f]);
    }
  });
}

ThreadSlot* ThreadRegistry::find(uintptr_t pthread) noexcept {
  ThreadSlot* found = nullptr;
  for_each_slot([&](ThreadSlot& slot) {
    if (!found && slot.claimed.load(std::memory_order_acquire) && slot.pthread == pthread)
      found = &slot;
  });
  return found;
}

ThreadSlot* ThreadRegistry::find_tid(uint32_t os_tid) noexcept {
  ThreadSlot* found = nullptr;
  for_each_slot([&](ThreadSlot& slot) {
    if (!found && slot.claimed.load(std::memory_order_acquire) && slot.os_tid == os_tid) found = &slot;
  });
  return found;
}

void ThreadRegistry::reset_for_child() noexcept {
  for_each_slot([](ThreadSlot& slot) {
    slot.claimed.store(0, std::memory_order_relaxed);
    slot.pthread = 0;
    slot.announced = false;
    for (unsigned f = 0; f < format::kFuncCount; ++f) {
      Counters::clear(slot.counters.calls[f]);
      Counters::clear(slot.counters.bytes[f]);
    }
  });
}

}  // namespace memloupe::recorder
