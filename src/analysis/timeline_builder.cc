#include "analysis/timeline_builder.h"

#include <algorithm>

namespace memloupe::analysis {

HeapPoint& TimelineBuilder::bucket_at(uint64_t t, bool& fresh) {
  while (t / timeline_.bucket_ns >= kMaxTimelinePoints) halve();
  const size_t index = static_cast<size_t>(t / timeline_.bucket_ns);
  fresh = timeline_.points.size() <= index;
  while (timeline_.points.size() <= index) {
    timeline_.points.push_back(HeapPoint{live_, live_, live_, 0, 0});
  }
  return timeline_.points[index];
}

void TimelineBuilder::halve() {
  std::vector<HeapPoint>& p = timeline_.points;
  const size_t n = (p.size() + 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    HeapPoint merged = p[2 * i];
    if (2 * i + 1 < p.size()) {
      const HeapPoint& b = p[2 * i + 1];
      merged.live_end = b.live_end;
      merged.live_max = std::max(merged.live_max, b.live_max);
      merged.live_min = std::min(merged.live_min, b.live_min);
      merged.allocated += b.allocated;
      merged.freed += b.freed;
    }
    p[i] = merged;
  }
  p.resize(n);
  timeline_.bucket_ns *= 2;
}

void TimelineBuilder::change_bucket(uint64_t t, double live, double allocated, double freed) {
  bool fresh = false;
  HeapPoint& bucket = bucket_at(t, fresh);
  current_ = static_cast<size_t>(t / timeline_.bucket_ns);
  current_end_ = (current_ + 1) * timeline_.bucket_ns;
  if (fresh && t % timeline_.bucket_ns == 0) bucket.live_max = bucket.live_min = live;
  apply(bucket, live, allocated, freed);
}

Timeline TimelineBuilder::finish(uint64_t t) && {
  bool fresh = false;
  bucket_at(t, fresh);
  return std::move(timeline_);
}

void RssBuilder::push(const format::RssSample& s) {
  if (samples_.size() == kMaxTimelinePoints) {
    for (size_t i = 0; i < samples_.size() / 2; ++i) {
      const auto& a = samples_[2 * i];
      const auto& b = samples_[2 * i + 1];
      samples_[i] = a.rss_bytes >= b.rss_bytes ? a : b;
    }
    samples_.resize(samples_.size() / 2);
    stride_ *= 2;
  }
  samples_.push_back(s);
}

void RssBuilder::add(const format::RssSample& s) {
  last_ = s;
  if (pending_count_ == 0 || s.rss_bytes > pending_.rss_bytes) pending_ = s;
  if (++pending_count_ >= stride_) {
    push(pending_);
    pending_count_ = 0;
  }
}

std::vector<format::RssSample> RssBuilder::finish() && {
  if (pending_count_ > 0) push(pending_);
  // The last sample stays, whatever the merges kept, so the curve reaches the
  // end of the run (the recorder takes one at exit).
  if (!samples_.empty() && samples_.back().time_ns != last_.time_ns) push(last_);
  return std::move(samples_);
}

}  // namespace memloupe::analysis
