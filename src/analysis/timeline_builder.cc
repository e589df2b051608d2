#include "analysis/timeline_builder.h"

#include <algorithm>

namespace memloupe::analysis {

template <class V>
typename BasicTimelineBuilder<V>::Point& BasicTimelineBuilder<V>::bucket_at(uint64_t t, bool& fresh) {
  while (t / bucket_ns_ >= kMaxTimelinePoints) halve();
  const size_t index = static_cast<size_t>(t / bucket_ns_);
  fresh = points_.size() <= index;
  while (points_.size() <= index) {
    points_.push_back(Point{live_, live_, live_, 0, 0});
  }
  return points_[index];
}

template <class V>
void BasicTimelineBuilder<V>::halve() {
  std::vector<Point>& p = points_;
  const size_t n = (p.size() + 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    Point merged = p[2 * i];
    if (2 * i + 1 < p.size()) {
      const Point& b = p[2 * i + 1];
      merged.live_end = b.live_end;
      merged.live_max = std::max(merged.live_max, b.live_max);
      merged.live_min = std::min(merged.live_min, b.live_min);
      merged.allocated += b.allocated;
      merged.freed += b.freed;
    }
    p[i] = merged;
  }
  p.resize(n);
  bucket_ns_ *= 2;
}

template <class V>
void BasicTimelineBuilder<V>::change_bucket(uint64_t t, V live, V allocated, V freed) {
  bool fresh = false;
  carry_live();
  Point& bucket = bucket_at(t, fresh);
  current_point_ = &bucket;
  current_end_ = (t / bucket_ns_ + 1) * bucket_ns_;
  if (fresh && t % bucket_ns_ == 0) bucket.live_max = bucket.live_min = live;
  apply(bucket, live, allocated, freed);
}

template <class V>
Timeline BasicTimelineBuilder<V>::finish(uint64_t t) && {
  bool fresh = false;
  carry_live();
  bucket_at(t, fresh);
  Timeline out;
  out.bucket_ns = bucket_ns_;
  out.points.reserve(points_.size());
  for (const Point& p : points_) {
    out.points.push_back(HeapPoint{static_cast<double>(p.live_end), static_cast<double>(p.live_max),
                                   static_cast<double>(p.live_min), static_cast<double>(p.allocated),
                                   static_cast<double>(p.freed)});
  }
  return out;
}

template class BasicTimelineBuilder<double>;
template class BasicTimelineBuilder<uint64_t>;

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
