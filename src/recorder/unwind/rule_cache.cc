#include "recorder/unwind/rule_cache.h"

#include <sys/mman.h>

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr size_t kTableBytes = RuleCache::kSlots * sizeof(RuleCache::Slot);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace

constinit RuleCache g_rule_cache;

RuleCache::Slot* RuleCache::map_slots() noexcept {
  Slot* slots = slots_.load(std::memory_order_acquire);
  if (slots != nullptr) return slots;
  // mmap rather than a static array: clear() can then drop the pages with
  // MADV_DONTNEED (they read back as zeros), and untouched buckets cost no RSS.
  void* mem = mmap(nullptr, kTableBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* fresh = static_cast<Slot*>(mem);
  // Zero-filled memory is a valid table of atomics holding 0 (empty).
  if (slots_.compare_exchange_strong(slots, fresh, std::memory_order_acq_rel)) return fresh;
  munmap(mem, kTableBytes);  // another thread (or a signal handler) won the race
  return slots;
}

void RuleCache::insert(uintptr_t pc, Rule rule) noexcept {
  if (rule.kind == RuleKind::kEmpty || pc >> kKeyBits != 0) return;
  Slot* slots = map_slots();
  if (slots == nullptr) return;
  const uint64_t tag = pc >> kBucketBits;
  Slot* bucket = slots + (pc & kBucketMask) * kWays;
  const uint64_t entry = tag << kRuleBits | pack_rule(rule);
  size_t victim = tag % kWays;  // when the bucket is full: a way chosen by the key
  for (size_t w = 0; w < kWays; ++w) {
    const uint64_t e = bucket[w].load(std::memory_order_relaxed);
    if (e == 0 || e >> kRuleBits == tag) {
      victim = w;
      break;
    }
  }
  bucket[victim].store(entry, std::memory_order_relaxed);
}

void RuleCache::clear() noexcept {
  Slot* slots = slots_.load(std::memory_order_acquire);
  if (slots == nullptr) return;
  if (madvise(slots, kTableBytes, MADV_DONTNEED) == 0) return;
  for (size_t i = 0; i < kSlots; ++i) slots[i].store(0, std::memory_order_relaxed);
}

size_t RuleCache::count() const noexcept {
  const Slot* slots = slots_.load(std::memory_order_acquire);
  if (slots == nullptr) return 0;
  size_t n = 0;
  for (size_t i = 0; i < kSlots; ++i) n += slots[i].load(std::memory_order_relaxed) != 0;
  return n;
}

}  // namespace memloupe::recorder::unwind_detail
