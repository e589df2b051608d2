// State that the encoder and the reader update identically, event by event, to
// predict fields instead of writing them:
//  - the recent-allocation window: the last kRecentAllocs allocations, whether
//    each is still live, its address, function and size class. A free names its
//    block by live rank ("the Nth most recent allocation still live"), which is
//    small for the common last-in-first-out lifetimes, and its function is
//    predicted from the allocating function (new -> delete, malloc -> free);
//  - in Mode::All, per size class, a small LIFO of freed addresses: allocators
//    hand the most recently freed block of a size class out again (glibc and
//    jemalloc tcaches), so that address is the prediction for the next one.
// No heap; both sides hold one of these.
#pragma once

#include <cstdint>
#include <span>

#include "format/funcs.h"
#include "format/wire.h"

namespace memloupe::format {

// Hash of a whole backtrace (innermost first). Part of the format: the reader
// recomputes it to place decoded backtraces in the same backtrace-cache way.
inline uint64_t backtrace_hash(std::span<const uint64_t> frames) noexcept {
  uint64_t h = 0x6a09e667f3bcc909ull ^ frames.size();
  for (uint64_t f : frames) {
    h = (h ^ f) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return h;
}
// The two slots a backtrace may live in (2-way skewed-associative).
inline unsigned backtrace_way1(uint64_t hash) noexcept {
  return static_cast<unsigned>(hash >> (64 - kBtCacheBits));
}
inline unsigned backtrace_way2(uint64_t hash) noexcept {
  return static_cast<unsigned>(hash >> 20) & (kBtCacheSize - 1);
}

// Size classes: 16-byte steps up to 1 KiB (0..64), then 4 per power of two.
inline constexpr unsigned kSizeClasses = 65 + 54 * 4;
inline unsigned size_class(uint64_t size) noexcept {
  if (size <= 1024) return static_cast<unsigned>((size + 15) >> 4);
  const unsigned e = 64 - static_cast<unsigned>(__builtin_clzll(size - 1));  // 11..64
  return 65 + (e - 11) * 4 + static_cast<unsigned>(((size - 1) >> (e - 3)) & 3);
}

class AllocHistory {
 public:
  static constexpr unsigned kStackDepth = 4;

  AllocHistory() noexcept;

  uint64_t predicted_address(uint64_t size) const noexcept {
    const Stack& s = stacks_[size_class(size)];
    return s.depth ? s.addr[s.depth - 1] : 0;
  }
  uint64_t previous_address() const noexcept { return prev_addr_; }
  void on_alloc(uint64_t id, uint64_t size, uint64_t address, Func func) noexcept;

  // The live rank of `id` (< next_id): how many allocations after it are still
  // live, if it is live and within the window; otherwise kNoRank.
  static constexpr uint64_t kNoRank = ~uint64_t{0};
  uint64_t live_rank(uint64_t id, uint64_t next_id) const noexcept;
  // The id with live rank `rank`, or kNoRank if there is none in the window.
  uint64_t id_of_rank(uint64_t rank, uint64_t next_id) const noexcept;

  // `id` must be < next_id.
  Func predicted_free_func(uint64_t id, uint64_t next_id) const noexcept;
  // A free (or the free half of a realloc, which teaches no function prediction).
  void on_free(uint64_t id, uint64_t next_id, Func func, bool realloc) noexcept;

 private:
  struct Recent {
    uint64_t address;
    Func func;
    uint16_t cls;
  };
  struct Stack {
    uint64_t addr[kStackDepth];
    uint8_t depth;
  };
  static bool known(uint64_t id, uint64_t next_id) noexcept {
    return id < next_id && next_id - id <= kRecentAllocs;
  }
  bool live(uint64_t id) const noexcept {
    return (live_[(id % kRecentAllocs) / 64] >> (id % 64)) & 1;
  }

  Recent recent_[kRecentAllocs];
  uint64_t live_[kRecentAllocs / 64];  // bit (id % kRecentAllocs): id is live
  Stack stacks_[kSizeClasses];
  Func free_for_[kFuncCount];  // the last free function seen for each allocating function
  Func last_free_ = Func::Free;
  uint64_t prev_addr_ = 0;
};

}  // namespace memloupe::format
