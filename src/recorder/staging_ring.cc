#include "recorder/staging_ring.h"

#include <cstdint>
#include <cstring>

#include "format/shared_frames.h"
#include "recorder/spin_lock.h"
#include "recorder/sys.h"

namespace memloupe::recorder {

namespace {
// Generations of rings in this process (a session's ring, then a fork child's or
// a later attach's): never 0, which a new StagedFrames holds.
uint16_t g_last_generation = 0;

}  // namespace

bool StagingRing::init() noexcept {
  map_ = Mapping::anonymous(kSlots * kSlotBytes);
  slots_ = static_cast<Slot*>(map_.data());
  next_.store(0, std::memory_order_relaxed);
  consumed_.store(0, std::memory_order_relaxed);
  room_.store(0, std::memory_order_relaxed);  // a fork child's: the sleepers were the parent's
  if (++g_last_generation == 0) ++g_last_generation;
  generation_ = g_last_generation;
  return slots_ != nullptr;
}

size_t StagingRing::share_with(StagedFrames& mine, std::span<const uint64_t> frames) noexcept {
  const size_t n = frames.size();
  size_t prev_n = mine.writer_n;
  if (mine.writer_generation != generation_) {
    mine.writer_generation = generation_;
    prev_n = 0;
  }
  const size_t most = n < prev_n ? n : prev_n;
  // Known equal: the outer frames the unwinder names, if the writer's copy is
  // the walk it names (ids are unique in the process, and a copy from another
  // ring generation counts as empty).
  size_t known = 0;
  if (mine.next.previous != 0 && mine.next.previous == mine.writer_walk)
    known = mine.next.outer < most ? mine.next.outer : most;
  const size_t shared =
      known + format::shared_outer_frames(frames.data() + n - known, mine.writer + kStagedFrames - known, most - known);
  if (n != 0) std::memcpy(mine.writer + kStagedFrames - n, frames.data(), (n - shared) * 8);
  mine.writer_n = static_cast<uint32_t>(n);
  mine.writer_walk = mine.next.walk;
  return shared;
}

void StagingRing::write_more(uint64_t t, std::span<const uint64_t> own) noexcept {
  copy_frames(slot(t).words + kHeadWords, own.data(), kHeadFrames);
  for (size_t done = kHeadFrames, i = 1; done < own.size(); done += kMoreFrames, ++i) {
    const size_t m = own.size() - done < kMoreFrames ? own.size() - done : kMoreFrames;
    copy_frames(slot(t + i).words, own.data() + done, m);
  }
}

std::span<const uint64_t> StagingRing::gather(uint64_t t, format::SharedPrefix& prefix, size_t n, size_t shared,
                                               uint64_t* scratch) noexcept {
  const uint64_t* w = slot(t).words;
  const auto generation = static_cast<uint16_t>(w[kAlignmentWord] >> 48);
  auto* mine = reinterpret_cast<StagedFrames*>(w[kFramesWord]);
  uint64_t* dst = scratch;
  if (mine != nullptr) {
    // The shared frames are the ones the consumer's copy ends with, if it is of
    // this generation (always, unless a ring was replaced under a writer: then
    // the record keeps only its own frames rather than borrow stale ones).
    if (mine->consumer_generation != generation) shared = 0;
    mine->consumer_generation = generation;
    dst = mine->consumer + kStagedFrames - (n + shared);
    prefix = {reinterpret_cast<uintptr_t>(mine), ++mine->consumer_seq, static_cast<uint32_t>(shared)};
  }
  const size_t first = n < kHeadFrames ? n : kHeadFrames;
  copy_frames(dst, w + kHeadWords, first);
  for (size_t done = first, i = 1; done < n; done += kMoreFrames, ++i) {
    const size_t m = n - done < kMoreFrames ? n - done : kMoreFrames;
    copy_frames(dst + done, slot(t + i).words, m);
  }
  return {dst, n + shared};
}

// A writer between its ticket and its publication is a few dozen instructions
// away, unless it was preempted: then it needs a CPU, and on a loaded machine it
// waits for one for milliseconds, so after a few yields the consumer (usually
// the flush thread) naps kGapNapNs at a time: the writer, once it runs,
// publishes within a nap.
bool StagingRing::wait_published(uint64_t t, uint64_t limit_ns) noexcept {
  const Slot& head = slot(t);
  return spin_then_yield([&] { return head.published.load(std::memory_order_acquire) == t + 1; },
                         limit_ns, kGapNapNs);
}

void StagingRing::wait_for_room(uint64_t need_consumed) noexcept {
  const uint32_t seen = room_.fetch_or(1, std::memory_order_seq_cst) | 1;
  if (consumed_.load(std::memory_order_seq_cst) >= need_consumed) return;
  futex_wait(reinterpret_cast<const uint32_t*>(&room_), seen, kRoomWaitNs);
}

void StagingRing::wake_waiters(uint64_t c) noexcept {
  if (next_.load(std::memory_order_relaxed) - c > kSlots / 2) return;
  // Clears bit 0 and counts a wake-up. Only the consumer clears the bit, and
  // writers only set it, so between the load that saw it and this add nothing
  // but a writer's no-op fetch_or can come.
  room_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(reinterpret_cast<const uint32_t*>(&room_), INT32_MAX);
}

}  // namespace memloupe::recorder
