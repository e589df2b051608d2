// The sampling callbacks a program installs with memloupe_set_callbacks() (the
// statistical-memory-profiling callback API: each sampled block with its sample
// count and backtrace; optionally its death). Called from the slow paths outside
// the trace lock, with the thread's hooks parked: a callback may allocate, its
// allocations are not recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "format/funcs.h"
#include "memloupe/memloupe.h"

namespace memloupe::recorder {

struct SampledBlock {
  uint64_t id;  // AllocId in the trace
  uint32_t n_samples;
  format::Func func;
  uint64_t size;
  void* address;
  std::span<const uint64_t> backtrace;
};

// One kind of callbacks or the other (the rest null): memloupe_set_callbacks()
// or memloupe_set_trackers() (api.cc).
struct CallbackSet {
  memloupe_alloc_callback on_alloc;
  memloupe_free_callback on_free;
  memloupe_track_callback on_track;
  memloupe_untrack_callback on_untrack;
};
void set_callbacks(const CallbackSet& c, void* user) noexcept;

namespace callback_detail {
extern std::atomic<memloupe_alloc_callback> g_on_alloc;
extern std::atomic<memloupe_track_callback> g_on_track;
}  // namespace callback_detail
// Inline: every --all call asks (event_path.h, staged()).
inline bool has_alloc_callback() noexcept {
  return callback_detail::g_on_alloc.load(std::memory_order_acquire) != nullptr ||
         callback_detail::g_on_track.load(std::memory_order_acquire) != nullptr;
}
// The lean gate's kLeanNoCallback bit (session.h) set from the callbacks now
// installed: by set_callbacks, and by a session's start.
void sync_lean_callback_bit() noexcept;
// True when the callback asked to be told when this block is freed.
bool notify_alloc(const SampledBlock& block) noexcept;
void notify_free(uint64_t id, void* address) noexcept;

}  // namespace memloupe::recorder
