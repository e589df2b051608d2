#include "ctf/ctf_writer.h"

#include <algorithm>
#include <string>

#include "ctf/ctf_packet.h"
#include "ctf/ctf_wire.h"

namespace memloupe::reader {

using namespace ctf;

namespace {

constexpr uint64_t kWordBytes = 8;
constexpr size_t kMaxContent = kMaxPacketBytes - kHeaderSizeV3;
// An alloc event: header, three vints, source, codeword count, codewords.
constexpr size_t kMaxAllocEvent = 4 + 3 * 9 + 1 + 2 + kMaxBacktraceBytes;
// A location event: header, code, count, body (bounded by the location codec).
constexpr size_t kMaxLocationEvent = 4 + kMaxLocationBytes;
// memtrace flushes once this many new locations are pending.
constexpr size_t kMaxPendingLocations = 128;

void event_header(Out& out, uint8_t code, uint64_t time_us) {
  out.u32(static_cast<uint32_t>(code) << kTimeBits | static_cast<uint32_t>(time_us & kTimeMask));
}

}  // namespace

CtfWriter::CtfWriter(const format::TraceInfo& info, const SymbolTable& symbols, Sink sink)
    : symbols_(symbols), sink_(std::move(sink)), pid_(info.pid), start_us_(info.start_wall_ns / 1000) {
  every_call_ = info.mode == format::Mode::All || info.bytes_per_sample == 0;
  last_us_ = start_us_;

  std::string context;
  for (const std::string& arg : info.argv) context += (context.empty() ? "" : " ") + arg;
  Out body;
  event_header(body, kTraceInfo, start_us_);
  // Per-word probability: 8 x the per-byte one (1 / bytes_per_sample).
  body.f64(every_call_ ? 1.0 : static_cast<double>(kWordBytes) / static_cast<double>(info.bytes_per_sample));
  body.u8(kWordBytes * 8);
  body.str(info.executable);
  body.str(info.host);
  body.str("");  // OCaml runtime parameters
  body.u64(info.pid);
  body.str(context);
  PacketHeader h;
  h.time_begin = h.time_end = start_us_;
  h.pid = pid_;
  Out packet;
  put_packet_header(packet, h, body.size());
  packet.append(body);
  emit(packet);
}

void CtfWriter::write(const format::Event& event) {
  if (auto* a = std::get_if<format::Alloc>(&event)) {
    note_thread(a->thread);
    if (a->size % kWordBytes != 0) ++stats_.rounded_sizes;
    alloc(*a);
  } else if (auto* f = std::get_if<format::Free>(&event)) {
    note_thread(f->thread);
    relative(f->id, f->time_ns, false);
  } else if (auto* p = std::get_if<format::Promote>(&event)) {
    relative(p->id, p->time_ns, true);
  } else if (std::holds_alternative<format::RssSample>(event)) {
    ++stats_.rss_samples;
  } else if (std::holds_alternative<format::Marker>(event)) {
    ++stats_.markers;
  } else if (std::holds_alternative<format::ModuleLoad>(event)) {
    ++stats_.modules;
  } else if (std::holds_alternative<format::CallTotals>(event)) {
    ++stats_.call_totals;
  } else if (std::holds_alternative<format::TraceEnd>(event)) {
    stats_.end_record = true;
  }
}

void CtfWriter::note_thread(format::ThreadId thread) {
  if (threads_seen_.insert(thread.value).second) ++stats_.threads;
}

std::vector<std::string> CtfWriter::losses() const {
  const Stats& s = stats_;
  std::vector<std::string> out;
  auto n = [](uint64_t v) { return std::to_string(v); };
  if (s.threads > 1) out.push_back(n(s.threads) + " threads: memtrace has one stream, they read back as one thread");
  if (s.rounded_sizes) {
    out.push_back(n(s.rounded_sizes) + " sizes that are not whole 8-byte words: rounded up (memtrace counts words)");
  }
  if (s.rss_samples) out.push_back(n(s.rss_samples) + " RSS samples");
  if (s.markers) out.push_back(n(s.markers) + " markers");
  if (s.modules) out.push_back(n(s.modules) + " module loads (each address's frames go along as its location)");
  if (s.call_totals) out.push_back("the exact call counters");
  if (s.end_record) out.push_back("the end record (how the program ended)");
  if (s.unmatched) out.push_back(n(s.unmatched) + " frees of allocations the trace does not hold");
  return out;
}

void CtfWriter::alloc(const format::Alloc& a) {
  const uint64_t length = a.size / kWordBytes + (a.size % kWordBytes != 0);
  const uint64_t samples = every_call_ ? std::max<uint64_t>(1, length) : a.n_samples;
  const uint64_t common = backtraces_.common_prefix(a.backtrace);
  const bool is_short = length >= 1 && length <= kShortAllocMaxWords && samples == 1 &&
                        a.backtrace.size() - common < 256;

  const uint64_t object = next_object_;
  begin_event(a.time_ns, is_short ? static_cast<uint8_t>(kShortAllocBase + length) : uint8_t{kAlloc});
  size_t count_at;
  if (is_short) {
    body_.vint(static_cast<int64_t>(common));
    count_at = body_.size();
    body_.u8(0);
  } else {
    body_.vint(static_cast<int64_t>(length));
    body_.vint(static_cast<int64_t>(samples));
    body_.u8(kMinor);
    body_.vint(static_cast<int64_t>(common));
    count_at = body_.size();
    body_.u16(0);
  }
  const uint32_t ncodes = backtraces_.encode(a.backtrace, common, object, body_, [this](uint64_t code) {
    if (located_.insert(code).second) pending_locations_.push_back(code);
  });
  // Short: fewer than 256 new frames, so fewer codewords. Long: 4 KiB of codewords.
  if (is_short) {
    body_.patch_u8(count_at, static_cast<uint8_t>(ncodes));
  } else {
    body_.patch_u16(count_at, static_cast<uint16_t>(ncodes));
  }
  ++(is_short ? stats_.short_allocs : stats_.long_allocs);
  live_[a.id.value] = object;
  ++next_object_;
}

void CtfWriter::relative(format::AllocId id, uint64_t time_ns, bool promote) {
  auto live = live_.find(id.value);
  if (live == live_.end()) {
    ++stats_.unmatched;
    return;
  }
  begin_event(time_ns, promote ? uint8_t{kPromote} : uint8_t{kCollect});
  // 0 names the latest allocation.
  body_.vint(static_cast<int64_t>(next_object_ - 1 - live->second));
  if (promote) {
    ++stats_.promotions;
  } else {
    ++stats_.collections;
    live_.erase(live);
  }
}

uint64_t CtfWriter::begin_event(uint64_t time_ns, uint8_t code) {
  const uint64_t now = std::max(last_us_, start_us_ + time_ns / 1000);
  last_us_ = now;
  if (packet_open_ && (body_.size() + kMaxAllocEvent > kMaxContent ||
                       now - packet_begin_us_ > kMaxPacketSpanUs ||
                       pending_locations_.size() > kMaxPendingLocations)) {
    flush();
  }
  if (!packet_open_) open_packet(now);
  packet_end_us_ = now;
  event_header(body_, code, now);
  return now;
}

void CtfWriter::open_packet(uint64_t now_us) {
  packet_open_ = true;
  packet_begin_us_ = packet_end_us_ = now_us;
  packet_first_object_ = next_object_;
  body_.clear();
  // The check describes the cache as the packet starts. memtrace leaves the first
  // events packet unchecked.
  verifier_ = first_packet_ ? BacktraceEncoder::Verifier{} : backtraces_.next_verifier();
  first_packet_ = false;
}

void CtfWriter::flush() {
  if (!packet_open_) return;
  // Locations first: they must precede the events that use them.
  size_t i = 0;
  while (i < pending_locations_.size()) {
    Out body;
    while (i < pending_locations_.size() && body.size() + kMaxLocationEvent <= kMaxContent) {
      event_header(body, kLocation, packet_begin_us_);
      const uint64_t code = pending_locations_[i++];
      locations_.encode(code, locations_of(code), body);
      ++stats_.location_events;
    }
    PacketHeader h;
    h.time_begin = h.time_end = packet_begin_us_;
    h.pid = pid_;
    h.alloc_begin = h.alloc_end = packet_first_object_;
    Out packet;
    put_packet_header(packet, h, body.size());
    packet.append(body);
    emit(packet);
  }
  pending_locations_.clear();

  PacketHeader h;
  h.time_begin = packet_begin_us_;
  h.time_end = packet_end_us_;
  h.pid = pid_;
  h.verify_ix = verifier_.ix;
  h.verify_pred = verifier_.pred;
  h.verify_value = verifier_.value;
  h.alloc_begin = packet_first_object_;
  h.alloc_end = next_object_;  // exclusive
  Out packet;
  put_packet_header(packet, h, body_.size());
  packet.append(body_);
  emit(packet);
  packet_open_ = false;
}

void CtfWriter::finish() { flush(); }

void CtfWriter::emit(Out& packet) {
  ++stats_.packets;
  stats_.bytes += packet.size();
  sink_(packet.bytes());
}

std::vector<Location> CtfWriter::locations_of(uint64_t address) const {
  auto known = symbols_.find(address);
  if (known == symbols_.end()) return {LocationEncoder::unknown()};
  std::vector<Location> locs;
  // memtrace: outermost inlined frame first; ours: innermost first.
  for (auto f = known->second.rbegin(); f != known->second.rend(); ++f) {
    locs.push_back(Location{f->file, f->line, f->column, f->column, f->function});
  }
  return locs;
}

}  // namespace memloupe::reader
