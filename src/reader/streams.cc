#include "reader/streams.h"

#include "format/varint.h"

namespace memloupe::reader {

std::optional<Error> read_columns(Cursor& c, uint32_t version, Columns& out) {
  uint8_t count;
  if (!c.u8(count) || count != kStreams)
    return c.expected("a stream count of " + std::to_string(kStreams));
  out.laned = version >= format::kLanesVersion;
  out.lane_count = 1;
  if (out.laned) {
    uint8_t lanes;
    if (!c.u8(lanes) || lanes == 0 || lanes > format::kMaxLanes)
      return c.expected("a lane count from 1 to " + std::to_string(format::kMaxLanes));
    out.lane_count = lanes;
  }
  // The sub-streams in payload order: the order stream, then each stream's lanes.
  Cursor* subs[format::kMaxSubStreams];
  size_t n = 0;
  if (out.laned) subs[n++] = &out.order;
  format::each_sub_stream(out.lane_count,
                          [&](Stream s, unsigned l) { subs[n++] = &out.lanes[l][static_cast<size_t>(s)]; });
  uint64_t lengths[std::size(subs)];
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    // Each length is bounded by what remains, so the sum cannot overflow.
    if (!c.varint_max(lengths[i], c.remaining()))
      return c.expected("a stream length (varint) within the chunk");
    total += lengths[i];
  }
  const size_t table_end = c.pos();
  if (total != c.remaining())
    return c.expected_at(table_end, "streams filling the rest of the chunk (" +
                                        std::to_string(c.remaining()) + " bytes), found " +
                                        std::to_string(total));
  for (size_t i = 0; i < n; ++i) (void)c.split(lengths[i], *subs[i]);
  return std::nullopt;
}

// Written anew (a valid trace's are the same bytes).
void ColumnTaps::thread_switch(uint32_t t) {
  if (!laned_) write_switch(t);  // else event() writes the lane's own
}

// The encoder's rule (format::LaneWalk), the event counted after it is placed.
void ColumnTaps::event(uint8_t h, bool threaded, uint32_t t) {
  if (laned_ && threaded && t != switched_) {
    switched_ = t;
    if (walk_.place<0>(t, bound_, [this](uint64_t entry) { order_.put_varint(entry); }, [](unsigned) {}))
      write_switch(t);
  }
  ++walk_.run;
  at(Stream::Head).push(h);
}

void ColumnTaps::write_switch(uint32_t t) {
  at(Stream::Head).push(format::switch_head(t));
  if (t >= format::kThreadEscape) at(Stream::Misc).put_varint(t);
}

size_t ColumnTaps::size() const {
  size_t n = order_.size();
  for (const auto& lane : taps_)
    for (const TapBuffer& t : lane) n += t.size();
  return n;
}

void ColumnTaps::mark(Mark& m) const {
  for (unsigned l = 0; l < walk_.map.lanes(); ++l)
    for (size_t i = 0; i < kStreams; ++i) m.sizes[l][i] = taps_[l][i].size();
  m.order = order_.size();
  m.walk = walk_;
  m.switched = switched_;
}

void ColumnTaps::rewind(const Mark& m) {
  // Lanes opened by the dropped event are emptied.
  for (unsigned l = 0; l < format::kMaxLanes; ++l)
    for (size_t i = 0; i < kStreams; ++i) taps_[l][i].truncate(l < m.walk.map.lanes() ? m.sizes[l][i] : 0);
  order_.truncate(m.order);
  walk_ = m.walk;
  switched_ = m.switched;
}

void ColumnTaps::write(std::vector<uint8_t>& payload) {
  uint8_t buf[format::kMaxVarint];
  auto varint = [&](uint64_t v) { payload.insert(payload.end(), buf, format::put_varint(buf, v)); };
  if (laned_) walk_.end([this](uint64_t entry) { order_.put_varint(entry); });
  const unsigned lanes = laned_ ? walk_.map.lanes() : 1;
  payload.push_back(static_cast<uint8_t>(kStreams));
  if (laned_) {
    payload.push_back(static_cast<uint8_t>(lanes));
    varint(order_.size());
  }
  auto each = [&](auto f) {
    format::each_sub_stream(lanes, [&](Stream s, unsigned l) { f(taps_[l][static_cast<size_t>(s)]); });
  };
  each([&](const TapBuffer& t) { varint(t.size()); });
  if (laned_) payload.insert(payload.end(), order_.bytes().begin(), order_.bytes().end());
  each([&](const TapBuffer& t) { payload.insert(payload.end(), t.bytes().begin(), t.bytes().end()); });
}

void ColumnTaps::clear() {
  for (auto& lane : taps_)
    for (TapBuffer& t : lane) t.clear();
  order_.clear();
  walk_.reset();
  switched_ = kNoThread;
}

}  // namespace memloupe::reader
