// State that the encoder and the reader update identically, event by event, to
// predict fields instead of writing them:
//  - the backtrace-cache hash (which slot a backtrace lives in);
//  - recent allocations (id -> address, func, size class), so a free's function
//    can be predicted from its allocation's function, and in Mode::All
//  - per size class, a small LIFO of freed addresses: allocators hand the most
//    recently freed block of a size class out again (glibc tcache, jemalloc
//    tcache), so "the address of the last freed block of this size" is usually
//    the next address.
// No heap; both sides hold one of these.
#pragma once

#include <cstdint>
#include <span>

#include "format/funcs.h"
#include "format/wire.h"

namespace memloupe::format {

// Hash of a whole backtrace (innermost first). Part of the format: the reader
// recomputes it to place decoded backtraces in the same backtrace-cache slot.
inline uint64_t backtrace_hash(std::span<const uint64_t> frames) noexcept {
  uint64_t h = 0x6a09e667f3bcc909ull ^ frames.size();
  for (uint64_t f : frames) {
    h = (h ^ f) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return h;
}
inline unsigned backtrace_slot(uint64_t hash) noexcept {
  return static_cast<unsigned>(hash >> (64 - kBtCacheBits));
}

// Size class for address prediction: 16-byte steps up to 1008 bytes, then one
// class for everything bigger.
inline unsigned size_class(uint64_t size) noexcept {
  uint64_t c = (size + 15) >> 4;
  return c < kSizeClasses - 1 ? static_cast<unsigned>(c) : kSizeClasses - 1;
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

  // `id` must be < next_id.
  Func predicted_free_func(uint64_t id, uint64_t next_id) const noexcept;
  // A free (or the free half of a realloc, which teaches no function prediction).
  void on_free(uint64_t id, uint64_t next_id, Func func, bool realloc) noexcept;

 private:
  struct Recent {
    uint64_t address;
    Func func;
    uint8_t cls;
  };
  struct Stack {
    uint64_t addr[kStackDepth];
    uint8_t depth;
  };
  static bool known(uint64_t id, uint64_t next_id) noexcept {
    return id < next_id && next_id - id <= kRecentAllocs;
  }

  Recent recent_[kRecentAllocs];
  Stack stacks_[kSizeClasses];
  Func free_for_[kFuncCount];  // the last free function seen for each allocating function
  Func last_free_ = Func::Free;
  uint64_t prev_addr_ = 0;
};

}  // namespace memloupe::format
