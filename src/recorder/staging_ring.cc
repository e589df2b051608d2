#include "recorder/staging_ring.h"

#include <cstring>

#include "recorder/spin_lock.h"

namespace memloupe::recorder {

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
  w[kFlagsWord] = static_cast<uint64_t>(r.kind) | uint64_t{static_cast<uint8_t>(r.func)} << 8 |
                 uint64_t{r.sampled} << 16 | uint64_t{frames.size()} << 17 | uint64_t{r.thread} << 32;
  w[kAlignmentWord] = r.alignment;
  w[kTimeWord] = r.time_ns;
  w[kAddressWord] = r.address;
  w[kSizeWord] = r.size;
  w[kOldAddressWord] = r.old_address;
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
  const uint64_t flags = w[kFlagsWord];
  r.kind = static_cast<StagedKind>(flags & 0xff);
  r.func = static_cast<format::Func>((flags >> 8) & 0xff);
  r.sampled = (flags >> 16) & 1;
  const auto n = static_cast<size_t>((flags >> 17) & 0x7fff);
  r.thread = static_cast<uint32_t>(flags >> 32);
  r.alignment = static_cast<uint32_t>(w[kAlignmentWord]);
  r.time_ns = w[kTimeWord];
  r.address = w[kAddressWord];
  r.size = w[kSizeWord];
  r.old_address = w[kOldAddressWord];
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
