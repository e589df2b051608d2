// "Could this block have been sampled?" in a couple of nanoseconds, for free().
//
// From LD_PRELOAD we cannot choose where sampled blocks live (Poireau's 1 GiB
// alignment, TCMalloc's tagged page heap), so frees are screened by address, in
// three levels, each consulted only when the one before says "maybe":
//
//   address ──hash──► summary bit  (word, bit)                 32 KiB: every free reads it
//                        │ set
//                        ▼
//                       count slot   (word, bit, group index)   1 MiB: slow path, no lock
//                        │ non-zero
//                        ▼
//                       AddressTable (exact, under the trace lock)
//
// The hash is the 128-bit product address * K (K: 2^64 / golden ratio, odd),
// one `mul`. Its positions, chosen for the free hook's instruction count:
//   word   the top kSummaryBits - 6 bits of the low half: one shift
//   bit    bits 0..5 of the high half, used as they are: `bt` takes a register
//          bit offset modulo 64, so the index needs no shift, mask or copy
//   group  the next kCountBits - kSummaryBits bits of the low half
// and slot = (word, bit, group) read as one number, so the slots under a bit are
// adjacent. (The free check is movabs, mul, shr, lea, load, bt, jb; a 64-bit
// product's top bits for both indices took two more: a copy and a second shift.)
//
// The count slots are a counting filter: registering a sampled block increments
// its slot, freeing it decrements it. A summary bit covers the 2^(kCountBits -
// kSummaryBits) adjacent slots that share the top kSummaryBits bits of the hash
// and is set exactly when one of them is non-zero. Both are written only on the
// slow paths (sampled allocation, recorded free, realloc), so the free of an
// unsampled block reads one bit of a small array that stays in cache, rather than
// one byte of 1 MiB (a cache miss per free on a free-heavy program). Any address
// whose bit is clear is certainly unsampled and goes straight to the real free.
//
// False positives, with L live sampled blocks and hashes that spread them evenly
// (multiplicative hashing does, for heap-like addresses: see the test):
//   - summary bit set by someone else: 1 - exp(-L / 2^kSummaryBits) ≈ L / 2^18.
//     At the default 512 KiB mean, L = live heap / 512 KiB: 1 GiB live is
//     L ≈ 2,000, 0.8% of frees; 5 GiB live, L ≈ 10,000, 3.7%. Each costs a
//     slow-path entry and a read of the block's count slot, not the lock.
//   - count slot non-zero as well: ≈ L / 2^20 (0.2% at 1 GiB live, 1% at
//     5 GiB); each costs a lock and a table lookup, answered "not ours".
// In --all mode the filter is not used (every free is looked up).
//
// Concurrency: writers hold the trace lock. A reader racing a writer may see a
// stale value; that is harmless because a block is registered before malloc
// returns it, so any free of it happens after its slot and bit were set (the
// program's own hand-off of the pointer orders the two), and they stay set until
// that block itself is removed: removing another block clears a bit only once all
// slots under it are zero. A stale "set" only costs a look. A slot that reaches
// 255 stays there (never decremented): saturation can cost lookups, never a
// missed free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder {

template <unsigned kCountBits, unsigned kSummaryBits>
class SummarisedFilter {
  static_assert(kSummaryBits >= 6 && kSummaryBits <= kCountBits && kCountBits < 32);

 public:
  static constexpr size_t kSlots = size_t{1} << kCountBits;
  static constexpr size_t kBits = size_t{1} << kSummaryBits;
  static constexpr size_t kSlotsPerBit = kSlots / kBits;
  static constexpr unsigned kWordBits = kSummaryBits - 6;  // 2^kWordBits summary words
  static constexpr unsigned kGroupBits = kCountBits - kSummaryBits;

  constexpr SummarisedFilter() noexcept = default;

  struct Hash {
    uint64_t lo, hi;  // halves of the 128-bit product
  };
  static Hash hash(uint64_t address) noexcept {
    constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15u;
#if defined(__x86_64__)
    // The same product; gcc's own `mul` loads the constant into a spare register
    // and copies it to rax (an instruction per free), this loads rax directly.
    Hash h;
    asm("mulq %3" : "=a"(h.lo), "=d"(h.hi) : "0"(kMultiplier), "r"(address) : "cc");
    return h;
#else
    const unsigned __int128 p = static_cast<unsigned __int128>(address) * kMultiplier;
    return {static_cast<uint64_t>(p), static_cast<uint64_t>(p >> 64)};
#endif
  }
  static size_t word_of(Hash h) noexcept {
    // Two shifts (folded into one) so that kWordBits == 0 gives word 0.
    return static_cast<size_t>((h.lo >> (63 - kWordBits)) >> 1);
  }
  static size_t bit_of(uint64_t address) noexcept {
    const Hash h = hash(address);
    return word_of(h) << 6 | (h.hi & 63);
  }
  static size_t slot_of(uint64_t address) noexcept {
    const Hash h = hash(address);
    const size_t group = static_cast<size_t>(h.lo >> (64 - kWordBits - kGroupBits)) & (kSlotsPerBit - 1);
    return bit_of(address) << kGroupBits | group;
  }

  // The free hook's test: one word of the summary, one bit of it (bit_of(), with
  // the bit index left for `bt` to reduce modulo 64).
  bool may_contain(uint64_t address) const noexcept {
    const Hash h = hash(address);
    // Matched by the release in add(); a plain load on x86-64.
    const uint64_t word = __atomic_load_n(&summary_[word_of(h)], __ATOMIC_ACQUIRE);
    return (word >> (h.hi % 64)) & 1;
  }

  // The slow path's second look, before taking the lock: the block's own slot.
  bool slot_may_contain(uint64_t address) const noexcept {
    return __atomic_load_n(&slots_[slot_of(address)], __ATOMIC_ACQUIRE) != 0;
  }

  // Under the trace lock.
  void add(uint64_t address) noexcept {
    uint8_t& s = slots_[slot_of(address)];
    const uint8_t v = __atomic_load_n(&s, __ATOMIC_RELAXED);
    if (v != kSaturated) __atomic_store_n(&s, static_cast<uint8_t>(v + 1), __ATOMIC_RELEASE);
    set_bit(bit_of(address), true);
  }

  // Under the trace lock.
  void remove(uint64_t address) noexcept {
    const size_t slot = slot_of(address);
    uint8_t& s = slots_[slot];
    const uint8_t v = __atomic_load_n(&s, __ATOMIC_RELAXED);
    if (v == kSaturated || v == 0) return;
    __atomic_store_n(&s, static_cast<uint8_t>(v - 1), __ATOMIC_RELAXED);
    if (v == 1 && group_is_empty(slot)) set_bit(bit_of(address), false);
  }

  // Zeroes what is set; reading the untouched slots maps the shared zero page, so
  // clearing costs memory only where the filter was used.
  void clear() noexcept {
    for (uint8_t& s : slots_)
      if (__atomic_load_n(&s, __ATOMIC_RELAXED) != 0) __atomic_store_n(&s, 0, __ATOMIC_RELAXED);
    for (uint64_t& w : summary_)
      if (__atomic_load_n(&w, __ATOMIC_RELAXED) != 0) __atomic_store_n(&w, 0, __ATOMIC_RELAXED);
  }

 private:
  static constexpr uint8_t kSaturated = 255;

  // The slots under one summary bit are adjacent: they share the hash's top bits.
  bool group_is_empty(size_t slot) const noexcept {
    const size_t first = slot & ~(kSlotsPerBit - 1);
    for (size_t i = first; i < first + kSlotsPerBit; ++i)
      if (__atomic_load_n(&slots_[i], __ATOMIC_RELAXED) != 0) return false;
    return true;
  }

  void set_bit(size_t b, bool on) noexcept {
    uint64_t& w = summary_[b / 64];
    const uint64_t mask = uint64_t{1} << (b % 64);
    const uint64_t old = __atomic_load_n(&w, __ATOMIC_RELAXED);
    const uint64_t now = on ? old | mask : old & ~mask;
    if (now != old) __atomic_store_n(&w, now, __ATOMIC_RELEASE);
  }

  // Plain integers accessed with atomic builtins: a constexpr std::atomic array of a
  // million elements exceeds clang's constant-evaluation step limit.
  alignas(64) uint64_t summary_[kBits / 64] = {};
  alignas(4096) uint8_t slots_[kSlots] = {};
};

// The recorder's filter: 2^20 one-byte slots (1 MiB, in .bss: pages nobody hashes
// to are never touched) under 2^18 summary bits (32 KiB, the hot part). See the
// false-positive rates above.
using SampleFilter = SummarisedFilter<20, 18>;

}  // namespace memloupe::recorder
