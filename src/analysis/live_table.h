// LiveTable: the blocks currently live, keyed by AllocId.
//
// AllocIds are handed out in order (the Nth allocation of the trace has id N)
// and most blocks die young, so the table has two parts:
//
//   window_  a ring of kWindow slots for the ids [base_, base_ + kWindow): slot
//            id % kWindow. New blocks land here; a short-lived block is freed
//            from a slot that is still in cache.
//   old_     an open-addressing hash table (IdHashTable) for the survivors: when
//            a new id pushes the window forward, the live blocks it leaves
//            behind move here.
//
// Measured on the 4-million-call alloc_mt trace (18k blocks live at most): a
// hash table alone took 23 ns per insert or take, nearly all of it cache misses;
// with the window, 6 ns (windows of 1Ki/4Ki/16Ki/64Ki ids: 14/10/6/6 ns). Memory
// follows the live blocks: kWindow slots plus the survivors.
//
// Ids that arrive out of order (a hand-made trace) are still correct: an id
// behind the window goes straight to old_.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/slot_array.h"

namespace memloupe::analysis {

// Open addressing with linear probing and backward-shift deletion (no
// tombstones, so a long trace of alloc/free pairs never degrades it). It grows
// at 3/4 load and halves when under 1/16 full. A Fibonacci multiplicative hash
// spreads the dense ids.
//
//   slots_:  [ key | value ] [ empty ] [ key | value ] ...   key == kEmpty marks a hole
template <class Value>
class IdHashTable {
 public:
  IdHashTable() { rehash(kMinCapacity); }

  size_t size() const { return size_; }

  // Inserts or overwrites.
  void insert(uint64_t key, const Value& value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    size_t i = home(key);
    while (slots_[i].first != kEmpty && slots_[i].first != key) i = (i + 1) & mask_;
    if (slots_[i].first == kEmpty) ++size_;
    slots_[i] = {key, value};
  }

  Value* find(uint64_t key) {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].first == key) return &slots_[i].second;
      if (slots_[i].first == kEmpty) return nullptr;
    }
  }

  // Removes `key` and returns its value through `out`; false if absent.
  bool take(uint64_t key, Value& out) {
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].first == key) break;
      if (slots_[i].first == kEmpty) return false;
    }
    out = slots_[i].second;
    // Backward shift: move later members of the probe run into the hole when
    // the hole lies on their way from their home slot.
    for (size_t j = (i + 1) & mask_; slots_[j].first != kEmpty; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].first);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].first = kEmpty;
    --size_;
    if (slots_.size() > kMinCapacity && size_ * 4 < slots_.size() / 4) rehash(slots_.size() / 2);
    return true;
  }

  template <class F>
  void for_each(F&& f) const {
    for (const auto& [key, value] : slots_) {
      if (key != kEmpty) f(key, value);
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static constexpr size_t kMinCapacity = 1024;

  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }

  void rehash(size_t capacity) {
    std::vector<std::pair<uint64_t, Value>> old = std::move(slots_);
    slots_.assign(capacity, {kEmpty, Value{}});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (const auto& [key, value] : old) {
      if (key != kEmpty) insert(key, value);
    }
  }

  std::vector<std::pair<uint64_t, Value>> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

// A window slot: the id beside the value (any Value).
template <class Value>
struct KeyedSlot {
  static constexpr bool kKeyless = false;
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  uint64_t key = kEmpty;
  Value value{};

  // Whether the slot holds `id`, one of the window's ids.
  bool holds(uint64_t id) const { return key == id; }
  bool empty() const { return key == kEmpty; }
  void set(uint64_t id, const Value& v) {
    key = id;
    value = v;
  }
  void clear() { key = kEmpty; }
};
// A window slot may instead keep no id (`Slot::kKeyless`): a slot can only
// hold the one id of the window that maps to it, so whether it is occupied
// is enough, marked in the value itself (a 32-byte Block then fills half a
// cache line, where its slot with the id was 40 bytes, half of them across
// two lines). The table then tests that an id is in the window before its
// slot.

// `Window`: kWindow, ids (16 Ki: 640 KiB of slots for a 32-byte value).
template <class Value, size_t Window = 16384, class Slot = KeyedSlot<Value>>
class LiveTable {
 public:
  static constexpr size_t kWindow = Window;
  static_assert((kWindow & (kWindow - 1)) == 0, "for_each's ids: a power of two");

  LiveTable() : window_(kWindow, Slot{}) {}  // (SlotArray: its pages, slot_array.h)

  size_t size() const { return in_window_ + old_.size(); }

  // Inserts or overwrites.
  [[gnu::always_inline]] void insert(uint64_t key, const Value& value) {
    Slot& slot = window_[key % kWindow];
    if (key == base_ + kWindow) [[likely]] {
      step(slot);  // (then key is in the window: no test of base_ again)
    } else if (key > base_ + kWindow) {
      advance(key - kWindow + 1);
    } else if (key < base_) {
      return old_.insert(key, value);
    }
    if (slot.empty()) ++in_window_;
    slot.set(key, value);
  }

  Value* find(uint64_t key) {
    if (outside_window(key)) return key < base_ ? old_.find(key) : nullptr;
    Slot& slot = window_[key % kWindow];
    return slot.holds(key) ? &slot.value : nullptr;
  }

  // Removes `key` and returns its value through `out`; false if absent.
  [[gnu::always_inline]] bool take(uint64_t key, Value& out) {
    if (outside_window(key)) return key < base_ && old_.take(key, out);
    Slot& slot = window_[key % kWindow];
    if (!slot.holds(key)) return false;
    out = slot.value;
    slot.clear();
    --in_window_;
    return true;
  }

  template <class F>
  void for_each(F&& f) const {
    // Up to the last occupied slot: a short trace's few blocks are at the
    // window's start, and visiting all 64 Ki slots was 334 k instructions at
    // the end of a trivial `memloupe run`'s index (now 6 k).
    for (size_t i = 0, left = in_window_; left != 0 && i < kWindow; ++i) {
      // (The window's id that maps to slot i: base_ + (i - base_) mod kWindow.)
      if (!window_[i].empty()) {
        --left;
        f(base_ + ((i - base_) % kWindow), window_[i].value);
      }
    }
    old_.for_each(f);
  }

 private:
  // Whether find() and take() look past the window's slots: an id behind it
  // (old_'s), and for keyless slots one a window ahead or more too (in one
  // test: the id's distance from base_). A keyed slot tells a later id by
  // its own.
  bool outside_window(uint64_t key) const {
    if constexpr (Slot::kKeyless) return key - base_ >= kWindow;
    return key < base_;
  }

  // advance(base_ + 1) for the id after the window, the usual case (ids come
  // in order, one per Alloc): the one id the window leaves shares the new id's
  // slot. Inline; the general loop's call and setup were ~15 instructions an
  // Alloc.
  void step(Slot& slot) {
    if (slot.holds(base_)) leave(base_, slot);
    ++base_;
  }
  // The window leaves a live block behind: to old_.
  [[gnu::noinline]] void leave(uint64_t id, Slot& slot) {
    old_.insert(id, slot.value);
    slot.clear();
    --in_window_;
  }

  // Moves the window to start at `base`, sending the live blocks it leaves to old_.
  [[gnu::noinline]] void advance(uint64_t base) {
    const uint64_t stop = std::min(base, base_ + kWindow);  // each slot is visited at most once
    for (uint64_t id = base_; id < stop; ++id) {
      Slot& slot = window_[id % kWindow];
      if (slot.holds(id)) leave(id, slot);
    }
    base_ = base;
  }

  SlotArray<Slot> window_;
  uint64_t base_ = 0;
  size_t in_window_ = 0;
  IdHashTable<Value> old_;
};

}  // namespace memloupe::analysis
