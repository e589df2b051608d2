// The exact map from the address of a recorded (sampled, or in --all mode every)
// live block to its value (its AllocId and flags). Consulted only after the
// CountingFilter says "maybe", always under the trace lock.
//
// Open addressing with linear probing and backward-shift deletion (no tombstones,
// so long-running programs do not degrade), in an anonymous mapping that doubles
// when a quarter full up to kQuarterLoadSlots slots (2 MiB), and when half full
// beyond. Memory: 16 bytes per slot, 64-128 bytes per live entry up to 32,768
// entries, then 32-64: at most 2 MiB more than growing at half full throughout.
// (It doubled at 70% until 2026-11-26: in --all mode the flush thread looks up
// every free, and a removal scans its probe run to the end for entries to shift
// back; those runs at loads of 35-70% made remove and insert a quarter of the
// flush thread's CPU on bench_alloc_mt, half of that at 25-50%. At 25-50% the
// scans, the probe loops' mispredicted exits and shift_back were still a quarter
// of the flush thread's samples on bench_maps_mt, whose 52,000 live blocks sat
// at 40% of 128Ki slots; at 20% of 256Ki they are a third of that:
// docs/RECORDER.md, "The flush thread's drain".)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "recorder/sys.h"

namespace memloupe::recorder {

class AddressTable {
 public:
  AddressTable() noexcept = default;
  AddressTable(const AddressTable&) = delete;
  AddressTable& operator=(const AddressTable&) = delete;

  // Adds or replaces. False if the table could not grow (mmap failed). Inline:
  // in --all mode the staged records' consumer inserts every allocation, and
  // the call cost it ~10 instructions each. At the load bound (see above) or
  // with no slots yet (grow_at_ is then 0): grow first.
  [[nodiscard]] bool insert(uint64_t address, uint64_t value) noexcept {
    if (count_ >= grow_at_ && !grow()) [[unlikely]]
      return false;
    size_t i = home(address);
    while (slots_[i].key != 0 && slots_[i].key != address) i = (i + 1) & mask_;
    if (slots_[i].key == 0) ++count_;
    slots_[i] = {address, value};
    return true;
  }
  // Removes and returns the value, if present.
  std::optional<uint64_t> take(uint64_t address) noexcept {
    uint64_t value;
    if (!remove(address, value)) return std::nullopt;
    return value;
  }
  // take() for the hot path, which inlines the wrapper above: an optional
  // returned from an out-of-line call went through the stack, a byte store and
  // then a wider load that store forwarding cannot serve (a stall on every free
  // in --all mode, a quarter of this function's samples in a perf profile).
  // Inline too, for the consumer's frees (~10 instructions a call).
  bool remove(uint64_t address, uint64_t& value) noexcept {
    if (count_ == 0) return false;
    size_t i = home(address);
    while (slots_[i].key != address) {
      if (slots_[i].key == 0) return false;
      i = (i + 1) & mask_;
    }
    value = slots_[i].value;
    // Most hits end their probe run (the table is at most half full): the
    // next slot is empty, nothing moves back, and the out-of-line call, ~12
    // instructions a free, is not needed.
    if (slots_[(i + 1) & mask_].key == 0) [[likely]] {
      slots_[i] = {0, 0};
      --count_;
    } else {
      shift_back(i);
    }
    return true;
  }
  size_t size() const noexcept { return count_; }
  size_t slots() const noexcept { return slots_ != nullptr ? mask_ + 1 : 0; }  // (tests)
  // Starts loading the slot where a lookup of `address` begins (a hint; the
  // table may grow before the lookup).
  void prefetch(uint64_t address) const noexcept {
    if (slots_ == nullptr) return;
    const Entry* e = &slots_[home(address)];
#if defined(__x86_64__)
    // Not __builtin_prefetch: gcc 12 deems a function whose only effect is that
    // builtin pure and deletes the calls to it (and so every prefetch), once
    // it sits behind a callback. A volatile asm is never deleted.
    asm volatile("prefetcht0 %0" : : "m"(*e));
#else
    __builtin_prefetch(e, 1);
#endif
  }
  // Calls f(address, value) for every entry (the caller holds the trace lock).
  template <class F>
  void for_each(F f) const noexcept {
    for (size_t i = 0; slots_ != nullptr && i <= mask_; ++i)
      if (slots_[i].key != 0) f(slots_[i].key, slots_[i].value);
  }
  // Drops everything and the memory.
  void clear() noexcept;

 private:
  struct Entry {
    uint64_t key;  // 0 = empty (malloc never returns address 0 for a live block)
    uint64_t value;
  };
  static constexpr unsigned kInitialBits = 12;  // 4096 slots, 64 KiB
  static constexpr size_t kQuarterLoadSlots = size_t{1} << 17;  // 2 MiB

  size_t home(uint64_t key) const noexcept {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15u) >> shift_);
  }
  bool grow() noexcept;
  // Empties slot i, pulling later members of its probe run back into the hole
  // (remove() empties a slot whose next one is empty itself).
  void shift_back(size_t i) noexcept;

  Mapping map_;
  Entry* slots_ = nullptr;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
  size_t grow_at_ = 0;  // the count at which insert() grows the table first
};

}  // namespace memloupe::recorder
