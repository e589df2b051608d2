#include "format/history.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <vector>

namespace memloupe::format {
namespace {

TEST(History, SizeClassesAreMonotonicAndBounded) {
  EXPECT_EQ(size_class(0), 0u);
  EXPECT_EQ(size_class(1), 1u);
  EXPECT_EQ(size_class(16), 1u);
  EXPECT_EQ(size_class(17), 2u);
  EXPECT_EQ(size_class(1024), 64u);
  EXPECT_EQ(size_class(1025), 65u);
  unsigned prev = 0;
  for (uint64_t s = 0; s < 100000; ++s) {
    const unsigned c = size_class(s);
    EXPECT_GE(c, prev);
    prev = c;
  }
  EXPECT_EQ(size_class(~uint64_t{0}), kSizeClasses - 1);
  for (unsigned b = 10; b < 64; ++b) EXPECT_LT(size_class(uint64_t{1} << b), kSizeClasses);
}

// A history that reads and writes version 3's block references (older traces).
std::unique_ptr<AllocHistory> v3_history() {
  auto h = std::make_unique<AllocHistory>();
  h->use_v3_refs();
  return h;
}

// Every reference the encoder picks resolves to the block, whatever the lifetimes.
TEST(HistoryV3, BlockReferencesResolve) {
  auto h = v3_history();
  std::mt19937_64 rng(5);
  std::set<uint64_t> live;
  uint64_t next = 0;
  unsigned kinds[4] = {};
  // A few long-lived blocks, freed at the end, when thousands of allocations are newer.
  std::vector<uint64_t> old;
  for (; next < 5; ++next) {
    h->on_alloc(next, 8, 0, Func::Malloc, 0);
    old.push_back(next);
  }
  auto check = [&](uint64_t id, uint32_t thread) {
    const uint64_t ref = h->block_ref(id, next, thread);
    ++kinds[ref & 3];
    ASSERT_EQ(h->resolve_ref(ref, next, thread), id) << "ref " << ref;
    if (next - id > kRecentAllocs) {
      ASSERT_EQ(ref & 3, 1u);  // only relative ids reach that far
    }
    h->on_free(id, next, Func::Free, false, thread);
  };
  for (int step = 0; step < 40000; ++step) {
    const uint32_t thread = static_cast<uint32_t>(rng() % 3);
    if (live.empty() || rng() % 2) {
      h->on_alloc(next, 8, 0, Func::Malloc, thread);
      live.insert(next++);
      continue;
    }
    // Mostly FIFO or LIFO, sometimes any block.
    auto it = rng() % 3 == 0 ? live.begin() : rng() % 2 ? std::prev(live.end()) : live.begin();
    if (rng() % 4 == 0) it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
    ASSERT_NO_FATAL_FAILURE(check(*it, thread)) << "step " << step;
    live.erase(it);
  }
  for (uint64_t id : old) ASSERT_NO_FATAL_FAILURE(check(id, 1));
  for (unsigned k = 0; k < 4; ++k) EXPECT_GT(kinds[k], 0u) << "kind " << k << " never chosen";
  EXPECT_EQ(h->resolve_ref(uint64_t{kRecentAllocs} << 2, next, 0), AllocHistory::kNoId);
  EXPECT_EQ(h->resolve_ref((next + 5) << 2 | 1, next, 0), AllocHistory::kNoId);
}

// The references are part of the format: whatever the history does to be fast,
// block_ref must pick exactly the value docs/FORMAT.md §5.6 defines, computed
// here by counting a plain set of live ids.
TEST(HistoryV3, BlockReferencesFollowTheFormatsDefinition) {
  auto h = v3_history();
  std::mt19937_64 rng(11);
  std::set<uint64_t> live;
  uint64_t next = 0;
  uint64_t last_freed[kThreadBuckets] = {};  // id + 1; 0: none
  auto live_between = [&](uint64_t lo, uint64_t hi) {  // live ids in [lo, hi)
    uint64_t n = 0;
    for (auto it = live.lower_bound(lo); it != live.end() && *it < hi; ++it) ++n;
    return n;
  };
  uint64_t wrapped = 0;
  for (int step = 0; step < 30000; ++step) {
    const uint32_t thread = static_cast<uint32_t>(rng() % 4);
    // Keep about 3000 blocks live, so ranks span most of the 4096-id window and wrap its ring.
    if (live.size() < 3000 || rng() % 2) {
      h->on_alloc(next, 8, 0, Func::Malloc, thread);
      live.insert(next++);
      continue;
    }
    auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
    const uint64_t id = *it;
    uint64_t want = (next - 1 - id) << 2 | 1;
    if (next - id <= kRecentAllocs) {
      const uint64_t floor = next > kRecentAllocs ? next - kRecentAllocs : 0;
      want = std::min(want, live_between(id + 1, next) << 2);
      const uint64_t lf = last_freed[thread % kThreadBuckets];
      if (lf != 0 && lf - 1 >= floor) {
        if (id > lf - 1) want = std::min(want, live_between(lf, id) << 2 | 2);
        else want = std::min(want, live_between(id + 1, lf - 1) << 2 | 3);
      }
      wrapped += (id % kRecentAllocs) > (next % kRecentAllocs);
      last_freed[thread % kThreadBuckets] = id + 1;
    }
    ASSERT_EQ(h->block_ref(id, next, thread), want) << "step " << step << " id " << id;
    ASSERT_EQ(h->resolve_ref(want, next, thread), id) << "step " << step;
    h->on_free(id, next, Func::Free, false, thread);
    live.erase(it);
  }
  EXPECT_GT(wrapped, 1000u);  // the ring's wrap-around was exercised
}

// The ends of the window: a live rank one past the oldest live allocation in it
// names none, the rank just below names that oldest one, whatever the window's
// alignment to the live bitmap's words (the reader's select_down skips whole words).
TEST(HistoryV3, LiveRanksStopAtTheWindowsFloor) {
  std::mt19937_64 rng(17);
  for (uint64_t total : {100u, 4096u, 4097u, 4100u, 4159u, 5000u, 9000u}) {
    auto h = v3_history();
    std::set<uint64_t> live;
    for (uint64_t id = 0; id < total; ++id) {
      h->on_alloc(id, 8, 0, Func::Malloc, 0);
      live.insert(id);
      if (rng() % 3 == 0) {  // free a random live block, as a thread-1 free
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        h->on_free(*it, id + 1, Func::Free, false, 1);
        live.erase(it);
      }
    }
    const uint64_t floor = total > kRecentAllocs ? total - kRecentAllocs : 0;
    const auto first = live.lower_bound(floor);
    ASSERT_NE(first, live.end());
    const auto count = static_cast<uint64_t>(std::distance(first, live.end()));
    EXPECT_EQ(h->resolve_ref((count - 1) << 2, total, 0), *first) << "total " << total;
    EXPECT_EQ(h->resolve_ref(count << 2, total, 0), AllocHistory::kNoId) << "total " << total;
  }
}

// Every live rank, below the newest (kind 0) and above and below a thread's
// last freed block (kinds 2 and 3), names the block a sorted set says, at
// densities from a few live bits a word to full words, the window's floor
// cutting a word, and from either end of the word holding the target.
TEST(HistoryV3, EveryLiveRankResolves) {
  std::mt19937_64 rng(23);
  for (unsigned keep_in_8 : {1u, 4u, 7u, 8u}) {
    auto h = v3_history();
    std::set<uint64_t> live;
    const uint64_t total = 6000;  // past the window: its floor cuts a word
    for (uint64_t id = 0; id < total; ++id) {
      h->on_alloc(id, 8, 0, Func::Malloc, 0);
      live.insert(id);
    }
    const uint64_t floor = total - kRecentAllocs;
    for (uint64_t id = floor; id < total - 1; ++id)
      if (rng() % 8 >= keep_in_8) {
        h->on_free(id, total, Func::Free, false, 1);
        live.erase(id);
      }
    const uint64_t lf = total - 1;  // thread 1's landmark: the newest, freed last
    h->on_free(lf, total, Func::Free, false, 1);
    live.erase(lf);
    const std::vector<uint64_t> window(live.lower_bound(floor), live.end());  // ascending
    ASSERT_FALSE(window.empty());
    for (uint64_t n = 0; n < window.size(); ++n) {
      const uint64_t below = window[window.size() - 1 - n];
      EXPECT_EQ(h->resolve_ref(n << 2, total, 0), below) << "kind 0, rank " << n << ", keep " << keep_in_8;
      EXPECT_EQ(h->resolve_ref(n << 2 | 3, total, 1), below) << "kind 3, rank " << n;
    }
    EXPECT_EQ(h->resolve_ref(window.size() << 2, total, 0), AllocHistory::kNoId);
    // Kind 2 from a landmark low in the window: the live ids above it, ascending.
    const uint64_t low = *std::next(live.lower_bound(floor), 3);
    h->on_free(low, total, Func::Free, false, 2);
    live.erase(low);
    const std::vector<uint64_t> above(live.upper_bound(low), live.end());
    for (uint64_t n = 0; n < above.size(); ++n)
      EXPECT_EQ(h->resolve_ref(n << 2 | 2, total, 2), above[n]) << "kind 2, rank " << n;
    EXPECT_EQ(h->resolve_ref(above.size() << 2 | 2, total, 2), AllocHistory::kNoId);
  }
}

TEST(HistoryV3, FifoFreesCostSmallReferences) {
  auto h = v3_history();
  uint64_t next = 0;
  for (; next < 1000; ++next) h->on_alloc(next, 8, 0, Func::Malloc, 0);
  // Thread 1 frees in allocation order: after the first, each is "the next live one
  // after the block I freed last".
  for (uint64_t id = 0; id < 1000; ++id) {
    const uint64_t ref = h->block_ref(id, next, 1);
    if (id > 0 && id < 999) {
      EXPECT_EQ(ref, 2u) << id;  // n = 0, kind 2 (the last one is also the newest: kind 0)
    }
    h->on_free(id, next, Func::Free, false, 1);
  }
}

// Version 4's references (docs/FORMAT.md §5.6, wire.h) counted on a plain set:
// the newest, and the last kLandmarks blocks each thread bucket freed.
class RefModel {
 public:
  void alloc(uint64_t id) { live_.insert(id); }
  void free(uint64_t id, uint64_t next, uint32_t thread) {
    live_.erase(id);
    if (next - id > kLiveWindow) return;  // outside the window: no landmark
    uint64_t* m = marks_[thread % kThreadBuckets];
    for (unsigned j = kLandmarks - 1; j > 0; --j) m[j] = m[j - 1];
    m[0] = id + 1;
  }
  // The encoder's choice (§5.6): the smallest of the relative id, kind 0 and
  // landmark 0's values; then landmarks 1 and 2's, each only while the best
  // counts kFarSearchFrom live blocks or more, and within kFarSearchSpan ids.
  uint64_t ref(uint64_t id, uint64_t next, uint32_t thread) const {
    uint64_t best = (next - 1 - id) << kRefBits | 1;
    if (next - id > kLiveWindow || !live_.count(id)) return best;
    if (next - id <= kRecentAllocs) best = std::min(best, between(id + 1, next) << kRefBits);
    for (unsigned j = 0; j < kLandmarks; ++j) {
      if (j > 0 && (best >> kRefBits) < AllocHistory::kFarSearchFrom) break;
      const uint64_t m = marks_[thread % kThreadBuckets][j];
      if (m == 0 || next - (m - 1) > kLiveWindow) continue;
      const uint64_t mark = m - 1;
      const uint64_t span = j == 0 ? kLandmarkSpan : AllocHistory::kFarSearchSpan;
      if (id > mark && id - mark <= span) best = std::min(best, between(mark + 1, id) << kRefBits | (2 + 2 * j));
      if (id < mark && mark - id <= span) best = std::min(best, between(id + 1, mark) << kRefBits | (3 + 2 * j));
    }
    return best;
  }
  const std::set<uint64_t>& live() const { return live_; }

 private:
  uint64_t between(uint64_t lo, uint64_t hi) const {  // live ids in [lo, hi)
    uint64_t n = 0;
    for (auto it = live_.lower_bound(lo); it != live_.end() && *it < hi; ++it) ++n;
    return n;
  }
  std::set<uint64_t> live_;
  uint64_t marks_[kThreadBuckets][kLandmarks] = {};
};

// block_ref picks exactly the encoder's documented choice and resolve_ref reads it back,
// on lifetimes that use every kind: last in first out, a table whose entries
// are replaced in turn (freed ~6000 allocations after they were made, beyond
// the 4096 recent ones, one after the other), and blocks picked at random.
TEST(History, BlockReferencesFollowTheFormatsDefinition) {
  auto h = std::make_unique<AllocHistory>();
  RefModel model;
  std::mt19937_64 rng(31);
  uint64_t next = 0;
  std::vector<uint64_t> table(600, ~uint64_t{0});
  size_t turn = 0;
  std::set<uint64_t> others;  // the live blocks not in the table
  uint64_t kinds[8] = {};
  auto free_one = [&](uint64_t id, uint32_t thread) {
    const uint64_t want = model.ref(id, next, thread);
    ASSERT_EQ(h->block_ref(id, next, thread), want) << "id " << id << " next " << next;
    ASSERT_EQ(h->resolve_ref(want, next, thread), id) << "ref " << want;
    ++kinds[want & 7];
    h->on_free(id, next, Func::Free, false, thread);
    model.free(id, next, thread);
  };
  auto alloc_one = [&](uint32_t thread) {
    h->on_alloc(next, 8, 0, Func::Malloc, thread);
    model.alloc(next);
    return next++;
  };
  auto newest = [&] { return *others.rbegin(); };
  for (int step = 0; step < 60000; ++step) {
    const uint32_t thread = static_cast<uint32_t>(rng() % 3);
    const uint64_t r = rng() % 10;
    if (r < 3) {  // the table: replace the next entry in turn
      if (table[turn] != ~uint64_t{0}) {
        ASSERT_NO_FATAL_FAILURE(free_one(table[turn], 0));
      }
      table[turn] = alloc_one(0);
      turn = (turn + 1) % table.size();
    } else if (others.size() < 1500 || r < 6) {
      others.insert(alloc_one(thread));
    } else {
      // Among the blocks not in the table: the newest, the oldest, or any.
      const uint64_t pick = rng() % 3;
      const uint64_t id = pick == 0 ? newest()
                          : pick == 1 ? *others.begin()
                                      : *others.lower_bound(*others.begin() + rng() % (newest() + 1 - *others.begin()));
      others.erase(id);
      ASSERT_NO_FATAL_FAILURE(free_one(id, thread)) << "step " << step;
    }
  }
  for (unsigned k = 0; k < 8; ++k) EXPECT_GT(kinds[k], 20u) << "kind " << k << " never chosen";
}

// The table's pattern: each free names the entry after the one freed before it.
TEST(History, EntriesReplacedInTurnCostOneByteEach) {
  auto h = std::make_unique<AllocHistory>();
  uint64_t next = 0;
  std::vector<uint64_t> table;
  for (int i = 0; i < 3000; ++i) {
    table.push_back(next);
    h->on_alloc(next++, 32, 0, Func::New, 0);
    h->on_alloc(next++, 16, 0, Func::New, 0);  // a neighbour that stays
  }
  for (int round = 0; round < 3; ++round)
    for (uint64_t& entry : table) {
      const uint64_t ref = h->block_ref(entry, next, 0);
      if (round > 0 || entry != table[0]) {  // (the first free has no landmark yet)
        EXPECT_LT(ref, 128u) << "entry " << entry << " next " << next;  // one varint byte
      }
      ASSERT_EQ(h->resolve_ref(ref, next, 0), entry);
      h->on_free(entry, next, Func::DeleteSized, false, 0);
      entry = next;
      h->on_alloc(next++, 32, 0, Func::New, 0);
    }
}

// A landmark reaches kLandmarkSpan ids either way and no further; a landmark or
// block that fell out of the 2^20-allocation window is named by relative id.
TEST(History, LandmarksReachTheirSpanAndWindowOnly) {
  auto h = std::make_unique<AllocHistory>();
  const uint64_t mark = 10000;
  uint64_t next = 0;
  for (; next < mark + kLandmarkSpan + 6000; ++next) h->on_alloc(next, 8, 0, Func::Malloc, 0);
  // Only the landmark and four blocks around it are freed or live: the rest go.
  const std::set<uint64_t> keep = {mark - kLandmarkSpan - 1, mark - kLandmarkSpan, mark + kLandmarkSpan,
                                   mark + kLandmarkSpan + 1};
  for (uint64_t id = 0; id < next; ++id)
    if (!keep.count(id) && id != mark) h->on_free(id, next, Func::Free, false, 1);
  h->on_free(mark, next, Func::Free, false, 0);  // thread 0's landmark 0
  // next - id > kRecentAllocs for all four (no kind 0): the span decides.
  EXPECT_EQ(h->block_ref(mark + kLandmarkSpan, next, 0), uint64_t{0} << kRefBits | 2);
  EXPECT_EQ(h->block_ref(mark - kLandmarkSpan, next, 0), uint64_t{0} << kRefBits | 3);
  EXPECT_EQ(h->block_ref(mark + kLandmarkSpan + 1, next, 0) & 7, 1u);  // beyond the span above
  EXPECT_EQ(h->block_ref(mark - kLandmarkSpan - 1, next, 0) & 7, 1u);  // and below
  EXPECT_EQ(h->resolve_ref(uint64_t{0} << kRefBits | 2, next, 0), mark + kLandmarkSpan);
  EXPECT_EQ(h->resolve_ref(uint64_t{1} << kRefBits | 2, next, 0), AllocHistory::kNoId);
  EXPECT_EQ(h->resolve_ref(uint64_t{0} << kRefBits | 3, next, 0), mark - kLandmarkSpan);
  EXPECT_EQ(h->resolve_ref(uint64_t{1} << kRefBits | 3, next, 0), AllocHistory::kNoId);
  EXPECT_EQ(h->resolve_ref(uint64_t{0} << kRefBits | 4, next, 0), AllocHistory::kNoId);  // no landmark 1
  // The window moves past the landmark: its references name nothing, and the
  // block above it, still live, is named by its relative id.
  for (; next <= mark + kLiveWindow; ++next) {
    h->on_alloc(next, 8, 0, Func::Malloc, 2);
    h->on_free(next, next + 1, Func::Free, false, 2);
  }
  EXPECT_EQ(h->resolve_ref(uint64_t{0} << kRefBits | 3, next, 0), AllocHistory::kNoId);
  EXPECT_EQ(h->block_ref(mark + kLandmarkSpan, next, 0), (next - 1 - (mark + kLandmarkSpan)) << kRefBits | 1);
}

// Every live rank from each of a thread's three landmarks, up and down, names
// the block a sorted set says (the select loops on the long window's ring).
TEST(History, EveryRankFromEachLandmarkResolves) {
  std::mt19937_64 rng(29);
  auto h = std::make_unique<AllocHistory>();
  std::set<uint64_t> live;
  const uint64_t total = kLiveWindow + 20000;  // the ring has wrapped
  for (uint64_t id = 0; id < total; ++id) {
    h->on_alloc(id, 8, 0, Func::Malloc, 0);
    if (id < total - 12000 || rng() % 3 == 0) h->on_free(id, id + 1, Func::Free, false, 1);
    else live.insert(id);
  }
  const uint64_t marks[kLandmarks] = {total - 2000, total - 6000, total - 9000};  // landmark 2, 1, 0 in turn
  for (unsigned j = kLandmarks; j-- > 0;) {
    live.erase(marks[j]);
    h->on_free(marks[j], total, Func::Free, false, 0);
  }
  for (unsigned j = 0; j < kLandmarks; ++j) {
    const uint64_t mark = marks[j];
    std::vector<uint64_t> above(live.upper_bound(mark), live.upper_bound(mark + kLandmarkSpan));
    for (uint64_t n = 0; n < above.size(); ++n)
      ASSERT_EQ(h->resolve_ref(n << kRefBits | (2 + 2 * j), total, 0), above[n]) << "landmark " << j << " rank " << n;
    EXPECT_EQ(h->resolve_ref(above.size() << kRefBits | (2 + 2 * j), total, 0), AllocHistory::kNoId);
    std::vector<uint64_t> below(live.lower_bound(mark - kLandmarkSpan), live.lower_bound(mark));
    std::reverse(below.begin(), below.end());
    for (uint64_t n = 0; n < below.size(); ++n)
      ASSERT_EQ(h->resolve_ref(n << kRefBits | (3 + 2 * j), total, 0), below[n]) << "landmark " << j << " rank " << n;
    EXPECT_EQ(h->resolve_ref(below.size() << kRefBits | (3 + 2 * j), total, 0), AllocHistory::kNoId);
  }
}

TEST(History, PredictsFreeFunctionFromAllocFunction) {
  auto h = std::make_unique<AllocHistory>();
  h->on_alloc(0, 8, 0, Func::New, 0);
  h->on_alloc(1, 8, 0, Func::Malloc, 0);
  h->on_alloc(2, 8, 0, Func::New, 0);
  EXPECT_EQ(h->predicted_free_func(0, 3), Func::Free);  // nothing learnt yet
  h->on_free(0, 3, Func::DeleteSized, false, 0);
  EXPECT_EQ(h->predicted_free_func(2, 3), Func::DeleteSized);
  EXPECT_EQ(h->predicted_free_func(1, 3), Func::Free);
}

TEST(History, RemembersFreedAddressesPerClassAndThread) {
  auto h = std::make_unique<AllocHistory>();
  h->on_alloc(0, 24, 0x1000, Func::Malloc, 0);
  h->on_alloc(1, 32, 0x2000, Func::Malloc, 0);  // same class as 24 (17..32)
  h->on_alloc(2, 30, 0x3000, Func::Malloc, 0);
  h->on_alloc(3, 100, 0x4000, Func::Malloc, 0);
  EXPECT_EQ(h->freed_address(24, 0, 0), 0u);
  h->on_free(0, 4, Func::Free, false, 0);
  h->on_free(1, 4, Func::Free, false, 0);
  h->on_free(2, 4, Func::Free, false, 1);  // another thread
  EXPECT_EQ(h->freed_address(30, 0, 0), 0x2000u);  // last in, first out
  EXPECT_EQ(h->freed_address(30, 0, 1), 0x1000u);
  EXPECT_EQ(h->freed_address(30, 1, 0), 0x3000u);
  EXPECT_EQ(h->freed_index(30, 0, 0x1000), 1u);
  EXPECT_EQ(h->freed_index(30, 0, 0x3000), AllocHistory::kNone);
  EXPECT_EQ(h->freed_address(100, 0, 0), 0u);
  h->on_alloc(4, 20, 0x2000, Func::Malloc, 0);  // reused: forgotten as freed
  EXPECT_EQ(h->freed_address(20, 0, 0), 0x1000u);
  EXPECT_EQ(h->class_previous(17), 0x2000u);
  EXPECT_EQ(h->thread_carve(0), 0x2000u + 32);  // glibc: 20 + 8 rounded to 16, at least 32
  EXPECT_EQ(carve_end(0x1000, 100), 0x1000u + 112);
}

// The freed lists against the format's definition (§5.6), on addresses drawn
// from a small pool so that lists fill, overflow and hold an address twice: a
// class's list holds the last 16 freed addresses with their threads' buckets,
// most recent on top; an allocation forgets the topmost copy of its address.
TEST(History, FreedListsFollowTheFormatsDefinition) {
  auto h = std::make_unique<AllocHistory>();
  std::mt19937_64 rng(23);
  struct Entry {
    uint64_t address;
    uint32_t bucket;
  };
  std::vector<Entry> model[kSizeClasses];  // back() is the most recent
  struct Block {
    uint64_t id, size, address;
  };
  std::vector<Block> live;
  uint64_t next = 0;
  const uint64_t sizes[] = {16, 24, 40, 2000};  // classes 1, 2, 3 and one of the large ones
  unsigned found = 0, shared = 0;
  for (int step = 0; step < 60000; ++step) {
    const uint32_t thread = static_cast<uint32_t>(rng() % 11);  // buckets 0-7, some shared
    const uint32_t bucket = thread % kThreadBuckets;
    if (live.size() < 40 || rng() % 2) {
      const uint64_t size = sizes[rng() % 4];
      const uint64_t address = 0x1000 + 16 * (rng() % 24);
      std::vector<Entry>& list = model[size_class(size)];
      unsigned want_index = AllocHistory::kNone, want_newest = AllocHistory::kNone, own = 0;
      for (size_t i = list.size(); i-- > 0;) {
        if (list[i].address == address && want_newest == AllocHistory::kNone) want_newest = static_cast<unsigned>(i);
        if (list[i].bucket != bucket) continue;
        if (list[i].address == address) {
          want_index = own;
          break;
        }
        ++own;
      }
      const AllocHistory::FreedMatch got = h->find_freed(size, thread, address);
      ASSERT_EQ(got.index, want_index) << "step " << step;
      ASSERT_EQ(got.newest, want_newest) << "step " << step;
      ASSERT_EQ(h->freed_index(size, thread, address), want_index);
      if (want_index != AllocHistory::kNone) {
        ASSERT_EQ(h->freed_address(size, thread, want_index), address);
        ++found;
        shared += list[want_newest].bucket != bucket;
      }
      // Half the time let on_alloc scan for itself, as the reader does.
      h->on_alloc(next, size, address, Func::Malloc, thread, rng() % 2 ? got.newest : AllocHistory::kScan);
      if (want_newest != AllocHistory::kNone) list.erase(list.begin() + want_newest);
      live.push_back({next++, size, address});
      continue;
    }
    const size_t pick = rng() % live.size();
    const Block b = live[pick];
    live.erase(live.begin() + static_cast<long>(pick));
    h->on_free(b.id, next, Func::Free, false, thread);
    if (next - b.id > kRecentAllocs) continue;  // outside the window: not pushed
    std::vector<Entry>& list = model[size_class(b.size)];
    if (list.size() == kFreedDepth) list.erase(list.begin());
    list.push_back({b.address, bucket});
  }
  EXPECT_GT(found, 1000u);
  EXPECT_GT(shared, 200u);  // another thread's copy above the match was forgotten instead
}

}  // namespace
}  // namespace memloupe::format
