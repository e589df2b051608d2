// The CPU features the hot paths choose an implementation by (crc32c.cc's
// SSE4.2 crc32, the unwinder's AVX2 memo check), asked once and cached.
//
// cpuid, not __builtin_cpu_supports: both are called from inside malloc in the
// traced process, possibly before any constructor (libgcc's CPU model among
// them) has run. Header-only, so the unwinder needs no library for it.
#pragma once

#if defined(__x86_64__)

#include <cpuid.h>

#include <atomic>

namespace memloupe::format {

inline bool cpu_has_sse42() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) != 0;
}

// AVX2, and the OS saving the ymm registers.
inline bool cpu_has_avx2() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || (c & bit_OSXSAVE) == 0 || (c & bit_AVX) == 0) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  asm("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0x6) != 0x6) return false;  // XMM and YMM state
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2) != 0;
}

// A yes/no asked the first time it is wanted and then remembered, for a
// constinit global: no constructor, one relaxed load per use. Two threads
// asking at once only ask twice.
class CachedFeature {
 public:
  explicit constexpr CachedFeature(bool (*ask)() noexcept) : ask_(ask) {}
  bool operator()() noexcept {
    int k = known_.load(std::memory_order_relaxed);
    if (k == kUnknown) [[unlikely]] {
      k = ask_() ? kYes : kNo;
      known_.store(k, std::memory_order_relaxed);
    }
    return k == kYes;
  }
  // For tests: use the feature only if `on` and the CPU has it. Returns
  // whether the CPU has it.
  bool force(bool on) noexcept {
    const bool can = ask_();
    known_.store(on && can ? kYes : kNo, std::memory_order_relaxed);
    return can;
  }

 private:
  static constexpr int kUnknown = 0, kNo = 1, kYes = 2;
  bool (*ask_)() noexcept;
  std::atomic<int> known_{kUnknown};
};

}  // namespace memloupe::format

#endif
