// "Could this block have been sampled?" in a couple of nanoseconds, for free().
//
// From LD_PRELOAD we cannot choose where sampled blocks live (Poireau's 1 GiB
// alignment, TCMalloc's tagged page heap), so frees are screened by address: a
// counting filter, one byte per slot, indexed by a multiplicative hash of the
// address. Registering a sampled block increments its slot, freeing it decrements
// it; free() of any address whose slot is 0 is certainly unsampled and goes
// straight to the real free — no lock, no syscall, no write. A non-zero slot sends
// the free to the exact table (AddressTable, under the trace lock), which answers
// false positives with "not ours".
//
// False-positive rate ≈ live sampled blocks / kSlots: 2^20 slots keep it under 1%
// up to ~10,000 live samples (5 GiB of live heap at the default 512 KiB mean). The
// table lives in .bss, so pages nobody hashes to are never touched.
//
// Concurrency: writers hold the trace lock. A reader racing a writer may see a
// stale value; that is harmless because a block is registered before malloc
// returns it, so any free of it happens after the increment (the program's own
// hand-off of the pointer orders the two), and a stale non-zero only costs a lookup.
// A slot that reaches 255 stays there (never decremented): saturation can cost
// lookups, never a missed free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder {

template <unsigned kBits>
class CountingFilter {
 public:
  static constexpr size_t kSlots = size_t{1} << kBits;

  constexpr CountingFilter() noexcept = default;

  static size_t slot_of(uint64_t address) noexcept {
    return static_cast<size_t>((address * 0x9e3779b97f4a7c15u) >> (64 - kBits));
  }

  bool may_contain(uint64_t address) const noexcept {
    // Matched by the release in add(); a plain load on x86-64.
    return __atomic_load_n(&slots_[slot_of(address)], __ATOMIC_ACQUIRE) != 0;
  }

  void add(uint64_t address) noexcept {
    uint8_t& s = slots_[slot_of(address)];
    const uint8_t v = __atomic_load_n(&s, __ATOMIC_RELAXED);
    if (v != kSaturated) __atomic_store_n(&s, static_cast<uint8_t>(v + 1), __ATOMIC_RELEASE);
  }

  void remove(uint64_t address) noexcept {
    uint8_t& s = slots_[slot_of(address)];
    const uint8_t v = __atomic_load_n(&s, __ATOMIC_RELAXED);
    if (v != kSaturated && v != 0) __atomic_store_n(&s, static_cast<uint8_t>(v - 1), __ATOMIC_RELAXED);
  }

  // Zeroes the slots that are set; reading the untouched ones maps the shared zero
  // page, so clearing costs memory only where the filter was used.
  void clear() noexcept {
    for (uint8_t& s : slots_)
      if (__atomic_load_n(&s, __ATOMIC_RELAXED) != 0) __atomic_store_n(&s, 0, __ATOMIC_RELAXED);
  }

 private:
  static constexpr uint8_t kSaturated = 255;
  // Plain bytes accessed with atomic builtins: a constexpr std::atomic array of a
  // million elements exceeds clang's constant-evaluation step limit.
  alignas(4096) uint8_t slots_[kSlots] = {};
};

// The recorder's filter: 2^20 slots (see the false-positive rate above).
using SampleFilter = CountingFilter<20>;

}  // namespace memloupe::recorder
