// StackTable: interns backtraces (spans of return addresses) as dense ids.
//
// Every Alloc carries its backtrace; the table turns it into an index with one
// hash over the frames and, usually, one comparison. The frames of all distinct
// stacks live back to back in one pool; an open-addressing index of
// (hash, id) pairs finds them.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "format/wire.h"
#include "reader/reader.h"

namespace memloupe::analysis {

class StackTable {
 public:
  StackTable();

  // The id of `frames` (new ids are size() before the call) and whether it is new.
  std::pair<uint32_t, bool> intern(std::span<const uint64_t> frames);
  // The same, for a backtrace the reader gave `key` (reader.h, BacktraceKey):
  // when the key's slot last held this serial, its id without looking at the
  // frames (a cached Alloc repeats a backtrace already interned: on deep
  // stacks the hash over every frame was most of the interning).
  // Serials number the fillings of one read, so a table takes keys from one
  // reader only (ThreadedOverview: the follower's or finalize's one read).
  // A key with a memo keeps the id there (id + 1; 0: not yet), so a reader's
  // memos serve one table; by_slot_ serves keys without one.
  // Inline only the memo's hit, nearly every Alloc of the follower's read:
  // inline, the rest made its caller save registers on every Alloc
  // (docs/RECORDER.md, "The index's work per event").
  std::pair<uint32_t, bool> intern(std::span<const uint64_t> frames, const reader::BacktraceKey& key) {
    if (const uint32_t id = memoised(key); id != kNone) [[likely]] return {id, false};
    return intern_keyed(frames, key);
  }
  // The id the key's memo holds (the key's backtrace interned before), or
  // kNone: intern() then.
  static constexpr uint32_t kNone = ~uint32_t{0};
  static uint32_t memoised(const reader::BacktraceKey& key) {
    return key.serial != 0 && key.memo && *key.memo != 0 ? *key.memo - 1 : kNone;
  }

  std::span<const uint64_t> frames(uint32_t id) const {
    const Range& r = ranges_[id];
    return {base_ + r.begin, r.size};
  }
  size_t size() const { return ranges_.size(); }

  // Every stack's frames back to back, in id order (stack id's at
  // frames(id).data() - pool start), moved out: an Aggregate that keeps every
  // stack takes them without a copy. frames() still reads them there, so the
  // vector must outlive its use, and nothing more may be interned.
  std::vector<uint64_t> lend_pool() { return std::move(pool_); }

 private:
  // intern(frames, key) but for a memo's hit (memoised() found none: a
  // memo here is still 0).
  [[gnu::noinline]] std::pair<uint32_t, bool> intern_keyed(std::span<const uint64_t> frames,
                                                           const reader::BacktraceKey& key) {
    if (key.serial == 0) return intern(frames);
    if (key.memo) {
      const auto interned = intern(frames);
      *key.memo = interned.first + 1;  // (an id of ~0u stays unmemoised: 0)
      return interned;
    }
    Known& known = by_slot_[key.slot & (kSlots - 1)];
    if (known.serial == key.serial) return {known.id, false};
    const auto interned = intern(frames);
    known = Known{key.serial, interned.first};
    return interned;
  }

  struct Range {
    size_t begin;
    uint32_t size;
    uint32_t hash;  // the low bits of the stack's hash, to skip most comparisons
  };
  static constexpr uint32_t kEmpty = ~uint32_t{0};
  // The stack of the latest serial seen in each backtrace-cache slot (a slot
  // number past kSlots shares an entry: a miss, never a wrong id).
  struct Known {
    uint64_t serial = 0;
    uint32_t id = 0;
  };
  static constexpr size_t kSlots = format::kBtCacheSize;

  void grow();

  std::vector<uint64_t> pool_;
  const uint64_t* base_ = nullptr;  // pool_'s frames, or where lend_pool() moved them
  std::vector<Range> ranges_;
  std::vector<uint32_t> index_;  // ids by hash slot; kEmpty = free
  size_t mask_ = 0;
  std::vector<Known> by_slot_ = std::vector<Known>(kSlots);
};

}  // namespace memloupe::analysis
