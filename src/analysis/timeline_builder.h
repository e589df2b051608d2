// Builds the bounded heap series (Timeline) from a time-ordered stream of
// changes to the live heap, in O(1) amortised per change.
//
// Buckets start 1 ns wide. When a change falls past the last of
// kMaxTimelinePoints buckets, neighbouring pairs merge and the width doubles,
// so the series always covers [0, latest change] with at most
// kMaxTimelinePoints buckets of equal width. Buckets without changes carry the
// live value over, so every bucket's min/max/end are true values: a bucket's
// range includes the value it was entered with, unless a change happens at the
// very instant it begins (then that value belongs to the bucket before).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/model.h"

namespace memloupe::analysis {

// `V`: the values' type. double for estimates (a sampled trace's); uint64_t
// for exact bytes (a Mode::All trace's, ExactTimelineBuilder), counted without
// a u64-to-double conversion per change, converted in finish(): the same
// doubles, as the sums of integers below 2^53 (8 PiB) that they are.
template <class V>
class BasicTimelineBuilder {
 public:
  // Moved, never copied: current_point_ points into points_' buffer, which a
  // move keeps and a copy would not.
  BasicTimelineBuilder() = default;
  BasicTimelineBuilder(BasicTimelineBuilder&&) noexcept = default;
  BasicTimelineBuilder& operator=(BasicTimelineBuilder&&) noexcept = default;
  BasicTimelineBuilder(const BasicTimelineBuilder&) = delete;
  BasicTimelineBuilder& operator=(const BasicTimelineBuilder&) = delete;

  // The heap is `live` bytes from time t on; `allocated`/`freed` bytes changed hands.
  // Inline for the common case, a change in the bucket of the one before
  // (two per Alloc and Free of an `--all` trace: the call was most of its cost).
  void change(uint64_t t, V live, V allocated, V freed) {
    // Times never go back, so a change before the current bucket's end is in it.
    // (current_end_ is 0, which no time is below, until change_bucket() made
    // the current bucket: no test of points_ needed.)
    if (t < current_end_) [[likely]] {
      return apply(*current_point_, live, allocated, freed);
    }
    change_bucket(t, live, allocated, freed);
  }
  // Extends the series to cover `t` (the end of the trace) and returns it.
  Timeline finish(uint64_t t) &&;

 private:
  struct Point {  // HeapPoint's fields, in V
    V live_end, live_max, live_min, allocated, freed;
  };
  // The bucket holding `t`; `fresh` says whether it was created by this call.
  Point& bucket_at(uint64_t t, bool& fresh);
  // change() at a time past the current bucket.
  void change_bucket(uint64_t t, V live, V allocated, V freed);
  // (The live value is the current bucket's live_end: change_bucket() and
  // finish() read it there for the buckets they add, one store fewer per change.)
  void apply(Point& b, V live, V allocated, V freed) {
    b.live_end = live;
    b.live_max = std::max(b.live_max, live);
    b.live_min = std::min(b.live_min, live);
    b.allocated += allocated;
    b.freed += freed;
  }
  void halve();
  // live_ from the latest change's bucket, before bucket_at() adds buckets
  // carrying it (and may merge that one).
  void carry_live() {
    if (current_point_ != nullptr) live_ = current_point_->live_end;
  }

  std::vector<Point> points_;
  uint64_t bucket_ns_ = 1;
  V live_ = 0;  // the live value carried into new buckets (carry_live)
  // The bucket of the latest change and where it ends: most changes land there,
  // which saves a division. A pointer, not an index (the index's load, the
  // vector's and the multiplication per change); set again where points_
  // changes (change_bucket).
  Point* current_point_ = nullptr;
  uint64_t current_end_ = 0;
};

using TimelineBuilder = BasicTimelineBuilder<double>;
using ExactTimelineBuilder = BasicTimelineBuilder<uint64_t>;

// Keeps at most kMaxTimelinePoints RSS samples: once full, neighbouring pairs
// merge (keeping the larger sample, so peaks survive) and later samples are
// merged in groups of the same stride. The last sample is always kept.
class RssBuilder {
 public:
  void add(const format::RssSample& s);
  std::vector<format::RssSample> finish() &&;

 private:
  void push(const format::RssSample& s);
  std::vector<format::RssSample> samples_;
  uint64_t stride_ = 1;
  uint64_t pending_count_ = 0;
  format::RssSample pending_;
  format::RssSample last_;
};

}  // namespace memloupe::analysis
