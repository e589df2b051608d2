// The memtrace CTF reader: packets in file order, events within each packet.
//
// Checks (as memtrace's own reader): packet magic, version, size and
// begin <= end; the cache verifier in each packet header; every event's time
// within its packet and never earlier than the previous event of its domain;
// consistent repeated location codes; and at each packet's end, that it held
// exactly alloc_id_end - alloc_id_begin allocations. In addition, promotions
// and collections must name a live allocation, since memloupe's Free names the
// AllocId it ends. Packets written by another pid (a forked child) are skipped.
#include "ctf/ctf_reader.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ctf/ctf_backtrace.h"
#include "ctf/ctf_cursor.h"
#include "ctf/ctf_events.h"
#include "ctf/ctf_location.h"
#include "ctf/ctf_packet.h"
#include "ctf/ctf_trace_info.h"
#include "ctf/ctf_wire.h"

namespace memloupe::reader {
namespace {

using namespace ctf;

// OCaml 5 runs at most 128 domains; each domain's decoder state is ~160 KiB.
constexpr size_t kMaxDomains = 128;

struct DomainState {
  uint16_t domain = 0;
  format::ThreadId thread;
  uint64_t last_time_us = 0;
  LocationDecoder locations;
  BacktraceDecoder backtraces;
};

class CtfReader final : public Reader {
 public:
  CtfReader(std::unique_ptr<Bytes> bytes, TraceStart start)
      : bytes_(std::move(bytes)),
        file_(bytes_->data()),
        info_(std::move(start.info)),
        details_(std::move(start.details)),
        next_packet_(start.data_offset) {}

  const format::TraceInfo& info() const override { return info_; }
  const std::optional<Error>& error() const override { return error_; }
  const SymbolTable& symbols() const override { return locations_.symbols(); }
  bool has_symbols_section() const override { return false; }
  uint64_t file_size() const override { return file_.size(); }
  uint64_t offset() const override { return cursor_ ? cursor_->offset() : next_packet_; }
  uint64_t events_read() const override { return events_read_; }
  const CtfDetails& details() const { return details_; }

  const format::Event* next() override {
    while (!done_) {
      if (!cursor_) {
        if (!enter_next_packet()) done_ = true;
      } else if (cursor_->at_end()) {
        finish_packet();
      } else if (read_event()) {
        ++events_read_;
        return &event_;
      }
    }
    return nullptr;
  }

 private:
  void fail(uint64_t offset, const std::string& what) {
    error_ = Error{"at offset " + std::to_string(offset) + ": " + what, offset};
    done_ = true;
  }
  void truncated(uint64_t packet, const std::string& detail) {
    error_ = Error{"trace ends early at offset " + std::to_string(packet) + " after " +
                       std::to_string(events_read_) + " events: " + detail,
                   packet};
    done_ = true;
  }

  // Positions the cursor on the next packet of the traced process. False at the
  // end of the file or on an error.
  bool enter_next_packet() {
    for (;;) {
      const uint64_t at = next_packet_;
      if (at == file_.size()) return false;
      const size_t needed = header_bytes_needed(file_, at);
      if (needed == 0 || file_.size() - at < needed) {
        truncated(at, "a packet header is cut off after " + std::to_string(file_.size() - at) + " bytes");
        return false;
      }
      Expected<PacketHeader> parsed = parse_packet_header(file_, at);
      if (!parsed) {
        error_ = parsed.error();
        done_ = true;
        return false;
      }
      const PacketHeader& h = *parsed;
      if (h.size > file_.size() - at) {
        truncated(at, "the packet there declares " + std::to_string(h.size) + " bytes, " +
                          std::to_string(file_.size() - at) + " remain");
        return false;
      }
      next_packet_ = h.end();
      ++details_.packets;
      if (h.pid != details_.pid) {  // a forked child's packet
        ++details_.skipped_packets;
        continue;
      }
      domain_ = domain_state(h.domain);
      if (domain_ == nullptr) {
        fail(at, "more than " + std::to_string(kMaxDomains) + " domains");
        return false;
      }
      if (!domain_->backtraces.verify(h.verify_ix, h.verify_pred, h.verify_value)) {
        fail(at, "backtrace cache verification failed at slot " + std::to_string(h.verify_ix));
        return false;
      }
      packet_ = h;
      allocs_in_packet_ = 0;
      cursor_.emplace(file_, h.content_begin(), h.end());
      return true;
    }
  }

  void finish_packet() {
    if (packet_.alloc_end - packet_.alloc_begin != allocs_in_packet_) {
      fail(packet_.offset, "the packet declares allocation ids [" + std::to_string(packet_.alloc_begin) +
                               ", " + std::to_string(packet_.alloc_end) + ") but holds " +
                               std::to_string(allocs_in_packet_) + " allocations");
    }
    cursor_.reset();
  }

  DomainState* domain_state(uint16_t domain) {
    for (auto& d : domains_) {
      if (d->domain == domain) return d.get();
    }
    if (domains_.size() == kMaxDomains) return nullptr;
    auto d = std::make_unique<DomainState>();
    d->domain = domain;
    d->thread = format::ThreadId{static_cast<uint32_t>(domains_.size())};
    d->last_time_us = details_.start_us;
    domains_.push_back(std::move(d));
    return domains_.back().get();
  }

  // Reads one event into event_. False on error (error_ set).
  bool read_event() {
    Cursor& in = *cursor_;
    const uint64_t at = in.offset();
    const uint32_t header = in.u32("event header");
    if (in.failed()) return fail_cursor();
    const uint64_t time = event_time(header, packet_.time_begin);
    if (time < packet_.time_begin || time > packet_.time_end) {
      fail(at, "event time " + std::to_string(time) + " us is outside its packet's [" +
                   std::to_string(packet_.time_begin) + ", " + std::to_string(packet_.time_end) + "]");
      return false;
    }
    if (time < domain_->last_time_us) {
      fail(at, "event time " + std::to_string(time) + " us is earlier than the previous event's " +
                   std::to_string(domain_->last_time_us));
      return false;
    }
    domain_->last_time_us = time;
    if (time - details_.start_us > UINT64_MAX / 1000) {
      fail(at, "event time out of range");
      return false;
    }
    time_ns_ = (time - details_.start_us) * 1000;

    const unsigned code = header >> kTimeBits;
    if (code == kLocation) return read_location(at);
    if (is_alloc_code(code)) return read_alloc(at, code);
    if (code == kPromote || code == kCollect) return read_promote_or_collect(at, code);
    fail(at, code == kTraceInfo ? std::string("a second trace_info event")
                                : "unknown event code " + std::to_string(code));
    return false;
  }

  bool fail_cursor() {
    error_ = cursor_->error();
    done_ = true;
    return false;
  }

  bool read_location(uint64_t at) {
    uint64_t code = 0;
    domain_->locations.decode(*cursor_, code, locations_scratch_);
    if (cursor_->failed()) return fail_cursor();
    ++details_.location_events;
    const std::vector<OwnedFrame>* frames = locations_.define(code, locations_scratch_);
    if (frames == nullptr) {
      fail(at, "location code " + std::to_string(code) + " redefined differently");
      return false;
    }
    symbol_frames_.clear();
    for (const OwnedFrame& f : *frames) {
      symbol_frames_.push_back(format::SymbolFrame{f.function, f.file, f.line, f.column});
    }
    event_ = format::SymbolDef{code, symbol_frames_};
    return true;
  }

  bool read_alloc(uint64_t at, unsigned code) {
    Cursor& in = *cursor_;
    const uint32_t word_bytes = details_.word_size / 8;
    const std::optional<AllocFields> f = parse_alloc(in, at, code, word_bytes);
    if (!f) return fail_cursor();
    if (allocs_in_packet_ == packet_.alloc_end - packet_.alloc_begin) {
      fail(at, "more allocations than the packet's id range [" + std::to_string(packet_.alloc_begin) +
                   ", " + std::to_string(packet_.alloc_end) + ")");
      return false;
    }
    domain_->backtraces.decode(in, f->common_prefix, f->ncodes);
    if (in.failed()) return fail_cursor();

    const uint64_t object = packet_.alloc_begin + allocs_in_packet_++;
    const format::AllocId id{next_alloc_id_++};
    if (!live_.emplace(object, id).second) {
      fail(at, "allocation id " + std::to_string(object) + " used twice");
      return false;
    }
    std::span<const uint64_t> frames = domain_->backtraces.frames();
    backtrace_.assign(frames.rbegin(), frames.rend());  // memtrace: caller first
    ++(f->is_short ? details_.short_allocs : details_.long_allocs);
    ++details_.allocs_by_source[f->source];
    details_.backtrace_frames += backtrace_.size();

    format::Alloc alloc;
    alloc.id = id;
    alloc.thread = domain_->thread;
    alloc.time_ns = time_ns_;
    alloc.size = f->length * word_bytes;
    alloc.n_samples = f->samples;
    alloc.func = format::Func::Malloc;
    alloc.backtrace = backtrace_;
    event_ = alloc;
    return true;
  }

  // Both name an object relative to the packet's allocations so far:
  // id = (alloc_id_begin + allocations seen) - 1 - delta.
  bool read_promote_or_collect(uint64_t at, unsigned code) {
    const bool promote = code == kPromote;
    const std::optional<int64_t> delta = parse_id_delta(*cursor_, at, promote);
    if (!delta) return fail_cursor();
    const uint64_t object = packet_.alloc_begin + allocs_in_packet_ - 1 - static_cast<uint64_t>(*delta);
    auto live = live_.find(object);
    if (live == live_.end()) {
      fail(at, std::string(promote ? "promote" : "collect") + " of allocation id " +
                   std::to_string(object) + ", which is not live");
      return false;
    }
    if (promote) {
      ++details_.promotions;
      event_ = format::Promote{live->second, time_ns_};
    } else {
      ++details_.collections;
      event_ = format::Free{live->second, domain_->thread, time_ns_, format::Func::Free};
      live_.erase(live);
    }
    return true;
  }

  std::unique_ptr<Bytes> bytes_;
  std::span<const uint8_t> file_;
  format::TraceInfo info_;
  CtfDetails details_;
  std::optional<Error> error_;
  bool done_ = false;
  uint64_t events_read_ = 0;

  uint64_t next_packet_;
  PacketHeader packet_;
  std::optional<Cursor> cursor_;  // over the current packet's events
  uint64_t allocs_in_packet_ = 0;
  std::vector<std::unique_ptr<DomainState>> domains_;
  DomainState* domain_ = nullptr;

  std::unordered_map<uint64_t, format::AllocId> live_;  // memtrace object id -> ours
  uint64_t next_alloc_id_ = 0;
  LocationTable locations_;

  // The current event and the storage its views point into.
  format::Event event_;
  uint64_t time_ns_ = 0;
  std::vector<uint64_t> backtrace_;
  std::vector<format::SymbolFrame> symbol_frames_;
  std::vector<Location> locations_scratch_;
};

}  // namespace

bool is_ctf(std::span<const uint8_t> data) {
  return data.size() >= 4 && data[0] == 0xC1 && data[1] == 0x1F && data[2] == 0xFC && data[3] == 0xC1;
}

Expected<std::unique_ptr<Reader>> open_ctf(std::unique_ptr<Bytes> bytes) {
  if (!is_ctf(bytes->data())) return Error{"not a memtrace CTF trace (bad magic)", 0};
  Expected<TraceStart> start = parse_trace_start(bytes->data());
  if (!start) return start.error();
  return std::unique_ptr<Reader>(new CtfReader(std::move(bytes), std::move(start.value())));
}

const CtfDetails* ctf_details(const Reader& reader) {
  auto* ctf = dynamic_cast<const CtfReader*>(&reader);
  return ctf != nullptr ? &ctf->details() : nullptr;
}

}  // namespace memloupe::reader
