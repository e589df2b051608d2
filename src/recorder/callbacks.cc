#include "recorder/callbacks.h"

#include <atomic>
#include <optional>

#include "recorder/address_table.h"
#include "recorder/session.h"
#include "recorder/spin_lock.h"

namespace memloupe::recorder {
namespace callback_detail {
constinit std::atomic<memloupe_alloc_callback> g_on_alloc{nullptr};
// memloupe_set_trackers: the same, with the program's tracker per tracked block,
// kept by address (the block's table value has no room for it) under its own
// lock: notify_* run outside the trace lock.
constinit std::atomic<memloupe_track_callback> g_on_track{nullptr};
}  // namespace callback_detail
namespace {

using callback_detail::g_on_alloc;
using callback_detail::g_on_track;
std::atomic<memloupe_free_callback> g_on_free{nullptr};
std::atomic<void*> g_user{nullptr};
std::atomic<memloupe_untrack_callback> g_on_untrack{nullptr};
constinit NoDestructor<AddressTable> g_trackers_storage;
AddressTable& g_trackers = g_trackers_storage.value;
constinit SpinLock g_trackers_lock;

bool no_alloc_callback() noexcept {
  return g_on_alloc.load(std::memory_order_seq_cst) == nullptr &&
         g_on_track.load(std::memory_order_seq_cst) == nullptr;
}

}  // namespace

void sync_lean_callback_bit() noexcept { sync_lean_bit(kLeanNoCallback, no_alloc_callback); }

// The allocation callback is stored last: a hook that sees it finds the others
// in place. Sequentially consistent, as the lean gate's sync wants.
void set_callbacks(const CallbackSet& c, void* user) noexcept {
  g_on_alloc.store(nullptr, std::memory_order_seq_cst);
  g_on_track.store(nullptr, std::memory_order_seq_cst);
  g_user.store(user, std::memory_order_release);
  g_on_free.store(c.on_free, std::memory_order_release);
  g_on_untrack.store(c.on_untrack, std::memory_order_release);
  g_on_track.store(c.on_track, std::memory_order_seq_cst);
  g_on_alloc.store(c.on_alloc, std::memory_order_seq_cst);
  sync_lean_callback_bit();
}

bool notify_alloc(const SampledBlock& b) noexcept {
  const memloupe_sample s{b.id,    b.n_samples,         format::func_name(b.func).data(),
                          b.size,  b.address,           b.backtrace.data(),
                          b.backtrace.size()};
  void* const user = g_user.load(std::memory_order_acquire);
  if (const memloupe_track_callback track = g_on_track.load(std::memory_order_acquire)) {
    void* tracker = track(&s, user);
    if (tracker == nullptr) return false;
    LockGuard g(g_trackers_lock);
    return g_trackers.insert(reinterpret_cast<uintptr_t>(b.address), reinterpret_cast<uintptr_t>(tracker));
  }
  const memloupe_alloc_callback cb = g_on_alloc.load(std::memory_order_acquire);
  return cb != nullptr && cb(&s, user) != 0;
}

void notify_free(uint64_t id, void* address) noexcept {
  void* const user = g_user.load(std::memory_order_acquire);
  std::optional<uint64_t> tracker;
  {
    LockGuard g(g_trackers_lock);
    tracker = g_trackers.take(reinterpret_cast<uintptr_t>(address));
  }
  if (tracker) {
    if (const memloupe_untrack_callback cb = g_on_untrack.load(std::memory_order_acquire))
      cb(id, address, reinterpret_cast<void*>(*tracker), user);
    return;
  }
  if (const memloupe_free_callback cb = g_on_free.load(std::memory_order_acquire)) cb(id, address, user);
}

}  // namespace memloupe::recorder
