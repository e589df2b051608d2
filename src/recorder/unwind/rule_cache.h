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
// Keys are code addresses below 2^47 (x86-64 user space). The bucket is the
// address's low 14 bits and the tag its bits 14..46, so a tag match in the right
// bucket is a key match. Each bucket has 4 ways in one half cache line. Return
// addresses are spread well enough in their low bits; the point of the plain split
// is a short dependency chain (one and, one load) in the unwinding loop.
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

  using Slot = std::atomic<uint64_t>;

  // The table, or null before the first insert. Load once per unwind.
  const Slot* slots() const noexcept { return slots_.load(std::memory_order_acquire); }

  // The slot word for `pc` in `slots` (from slots()), or 0 if absent; its low
  // kRuleBits are the packed rule. A few instructions and one cache line; no calls.
  static uint64_t find_entry(const Slot* slots, uintptr_t pc) noexcept {
    if (slots == nullptr) return 0;
    // No check that pc < 2^47: the tag of a larger address is wider than any
    // stored tag (kKeyBits - kBucketBits bits), so it matches no slot.
    const uint64_t tag = pc >> kBucketBits;
    const Slot* bucket = slots + (pc & kBucketMask) * kWays;
    // Unrolled: a hit in the first way (the usual case) costs no loop bookkeeping.
    static_assert(kWays == 4);
    uint64_t e = bucket[0].load(std::memory_order_relaxed);
    if (e >> kRuleBits == tag) return e;  // an empty slot has no rule bits: still 0
    e = bucket[1].load(std::memory_order_relaxed);
    if (e >> kRuleBits == tag) return e;
    e = bucket[2].load(std::memory_order_relaxed);
    if (e >> kRuleBits == tag) return e;
    e = bucket[3].load(std::memory_order_relaxed);
    return e >> kRuleBits == tag ? e : 0;
  }

  std::optional<Rule> find(uintptr_t pc) const noexcept {
    const uint64_t e = find_entry(slots(), pc);
    if ((e & kRuleMask) == 0) return std::nullopt;
    return unpack_rule(static_cast<uint32_t>(e & kRuleMask));
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

  static constexpr uint64_t kRuleMask = (uint64_t{1} << kRuleBits) - 1;

 private:
  static constexpr uint64_t kBucketMask = (uint64_t{1} << kBucketBits) - 1;
  static_assert(kKeyBits - kBucketBits + kRuleBits == 64, "tag and rule fill one word");

  Slot* map_slots() noexcept;

  // The table is mapped on first use and lives as long as the process: unwinding must
  // keep working in atexit handlers and exiting threads after static destructors.
  std::atomic<Slot*> slots_{nullptr};
};

// The one table the unwinder uses; constant-initialised, so it is usable from the
// first malloc of the process, before any constructor has run.
extern RuleCache g_rule_cache;
inline RuleCache& rule_cache() noexcept { return g_rule_cache; }

}  // namespace memloupe::recorder::unwind_detail
