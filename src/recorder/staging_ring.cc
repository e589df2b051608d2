#include "recorder/staging_ring.h"

#include <cstring>

#include "recorder/spin_lock.h"

namespace memloupe::recorder {
namespace {

// Head slot: published, then these words, then kHeadFrames frames.
//   w0: kind (bits 0-7) | func (8-15) | sampled (16) | frame count (17-31) | thread (32-63)
//   w1: alignment      w2: time_ns    w3: address    w4: size    w5: old_address
// (peek() in the header reads w3 and w5 too.)
constexpr size_t kHeadWords = 6;
static_assert(kHeadWords + StagingRing::kHeadFrames == StagingRing::kSlotBytes / 8 - 1);

}  // namespace

bool StagingRing::init() noexcept {
  map_ = Mapping::anonymous(kSlots * kSlotBytes);
  slots_ = static_cast<Slot*>(map_.data());
  next_.store(0, std::memory_order_relaxed);
  consumed_.store(0, std::memory_order_relaxed);
  return slots_ != nullptr;
}

void StagingRing::write(uint64_t t, const StagedRecord& r, std::span<const uint64_t> frames) noexcept {
  Slot& head = slot(t);
  uint64_t* w = head.words;
  w[0] = static_cast<uint64_t>(r.kind) | uint64_t{static_cast<uint8_t>(r.func)} << 8 |
         uint64_t{r.sampled} << 16 | uint64_t{frames.size()} << 17 | uint64_t{r.thread} << 32;
  w[1] = r.alignment;
  w[2] = r.time_ns;
  w[3] = r.address;
  w[4] = r.size;
  w[5] = r.old_address;
  const size_t first = frames.size() < kHeadFrames ? frames.size() : kHeadFrames;
  if (first != 0) std::memcpy(w + kHeadWords, frames.data(), first * 8);  // data() may be null
  for (size_t done = first, i = 1; done < frames.size(); done += kMoreFrames, ++i) {
    const size_t m = frames.size() - done < kMoreFrames ? frames.size() - done : kMoreFrames;
    std::memcpy(slot(t + i).words, frames.data() + done, m * 8);
  }
  head.published.store(t + 1, std::memory_order_release);
}

bool StagingRing::read(uint64_t t, StagedRecord& r, std::span<const uint64_t>& frames,
                       uint64_t* scratch) noexcept {
  Slot& head = slot(t);
  if (head.published.load(std::memory_order_acquire) != t + 1) return false;
  const uint64_t* w = head.words;
  r.kind = static_cast<StagedKind>(w[0] & 0xff);
  r.func = static_cast<format::Func>((w[0] >> 8) & 0xff);
  r.sampled = (w[0] >> 16) & 1;
  const auto n = static_cast<size_t>((w[0] >> 17) & 0x7fff);
  r.thread = static_cast<uint32_t>(w[0] >> 32);
  r.alignment = static_cast<uint32_t>(w[1]);
  r.time_ns = w[2];
  r.address = w[3];
  r.size = w[4];
  r.old_address = w[5];
  if (n <= kHeadFrames) {
    frames = {w + kHeadWords, n};
    return true;
  }
  std::memcpy(scratch, w + kHeadWords, kHeadFrames * 8);
  for (size_t done = kHeadFrames, i = 1; done < n; done += kMoreFrames, ++i) {
    const size_t m = n - done < kMoreFrames ? n - done : kMoreFrames;
    std::memcpy(scratch + done, slot(t + i).words, m * 8);
  }
  frames = {scratch, n};
  return true;
}

// A writer between its ticket and its publication is a few dozen instructions
// away, unless it was preempted.
bool StagingRing::wait_published(uint64_t t, uint64_t limit_ns) noexcept {
  const Slot& head = slot(t);
  return spin_then_yield([&] { return head.published.load(std::memory_order_acquire) == t + 1; }, limit_ns);
}

}  // namespace memloupe::recorder
