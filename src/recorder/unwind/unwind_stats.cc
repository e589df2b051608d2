#include "recorder/unwind/unwind_stats.h"

#include <atomic>

namespace memloupe::recorder::unwind_detail {
namespace {
constinit std::atomic<uint64_t> g_fallbacks{0};
}  // namespace

void count_fallback() noexcept { g_fallbacks.fetch_add(1, std::memory_order_relaxed); }
uint64_t fallback_count() noexcept { return g_fallbacks.load(std::memory_order_relaxed); }

}  // namespace memloupe::recorder::unwind_detail
