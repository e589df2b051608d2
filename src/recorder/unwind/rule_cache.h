// The process-wide cache of unwind rules, keyed by code address.
//
// Lock-free and signal-safe: every slot is one 64-bit word that holds both the key
// and the rule, so a reader sees either a whole entry or none (no torn pairs, no
// sequence numbers), and a signal handler may read or insert while the interrupted
// code is in the middle of doing the same. Lost inserts and duplicate entries under
// races are harmless: both only cost a recomputation.
//
//   slot word:  tag:33 | packed rule:31        (all zero = empty)
//
// Keys are code addresses below 2^47 (x86-64 user space). A bijective mix of the 47
// bits gives the bucket (its top 14 bits) and the tag (its low 33 bits); bucket and
// tag together determine the address, so a tag match in the right bucket is a key
// match. Each bucket has 4 ways in one half cache line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "recorder/unwind/rule.h"

namespace memloupe::recorder::unwind_detail {

class RuleCache {
 public:
  static constexpr unsigned kBucketBits = 14;
  static constexpr size_t kWays = 4;
  static constexpr size_t kSlots = (size_t{1} << kBucketBits) * kWays;
  static constexpr unsigned kKeyBits = 47;

  // The cached rule for `pc`, or nothing. A few loads, no calls.
  std::optional<Rule> find(uintptr_t pc) const noexcept {
    const std::atomic<uint64_t>* slots = slots_.load(std::memory_order_acquire);
    if (slots == nullptr || pc >> kKeyBits != 0) return std::nullopt;
    const uint64_t h = mix(pc);
    const std::atomic<uint64_t>* bucket = slots + (h >> kTagBits) * kWays;
    const uint64_t tag = h & kTagMask;
    for (size_t w = 0; w < kWays; ++w) {
      const uint64_t e = bucket[w].load(std::memory_order_relaxed);
      if (e >> kRuleBits == tag && (e & kRuleMask) != 0) {
        return unpack_rule(static_cast<uint32_t>(e & kRuleMask));
      }
    }
    return std::nullopt;
  }

  // Remembers `rule` for `pc` (a kEmpty rule or an address >= 2^47 is not stored).
  // The first call maps the table (one mmap); if that fails nothing is cached.
  void insert(uintptr_t pc, Rule rule) noexcept;

  // Forgets every entry (their code may have been unmapped). Concurrent readers see
  // old entries or none; a rule computed before the call may still be inserted after
  // it, which is the accepted window after dlclose.
  void clear() noexcept;

  // Entries present (a linear scan, for tests and diagnostics only).
  size_t count() const noexcept;

 private:
  static constexpr unsigned kTagBits = kKeyBits - kBucketBits;
  static constexpr uint64_t kTagMask = (uint64_t{1} << kTagBits) - 1;
  static constexpr uint64_t kRuleMask = (uint64_t{1} << kRuleBits) - 1;
  static_assert(kTagBits + kRuleBits == 64, "tag and rule must fill one word");

  // A bijection on 47-bit values: xor-shifts and a multiplication by an odd constant
  // are each invertible modulo 2^47.
  static constexpr uint64_t mix(uint64_t x) {
    constexpr uint64_t kMask = (uint64_t{1} << kKeyBits) - 1;
    x ^= x >> 19;
    x = (x * 0x9E3779B97F4A7C15ull) & kMask;
    x ^= x >> 23;
    return x;
  }

  std::atomic<uint64_t>* map_slots() noexcept;

  std::atomic<std::atomic<uint64_t>*> slots_{nullptr};
};

// The one table the unwinder uses.
RuleCache& rule_cache() noexcept;

}  // namespace memloupe::recorder::unwind_detail
