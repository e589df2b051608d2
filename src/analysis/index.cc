// The analysis index (index.h): its encoding, its checked decoding, and the
// model built from it. Layout (all varints unless said; f64 = u64 bits, LE):
//
//   version | event_chunks, u32 crc | temporary_ns, series_buckets
//   overview:  duration, end reason (0 none, 1 + reason), events, alloc, free,
//              unmatched, inversions | threads | modules | markers |
//              call totals (u8 present, time, n functions (v2), per function
//              calls, bytes) | allocated, leaked | peak time, alloc (0 none,
//              1 + id), live | heap timeline | rss (time, bytes) | peak_rss |
//              mapped (v2): allocated, leaked, peak, peak time, timeline, f64
//              combined peak, its time
//   timeline:  bucket_ns, points (5 f64)
//   aggregate: series_buckets, series_bucket_ns | frame pool | stacks (begin,
//              size, 6 counts, series (index, 3 counts)) | threads (id, 6 counts)
//              | totals | 65 + 1 lifetime counts | rejected_blocks | immediate (v2)
//   count:     blocks, samples, bytes, f64 objects, f64 objects_var (v2)
// Lists are a count then the elements.
//
// Version 3 (the denser form, docs/FORMAT.md §10): the counts that are stored
// together (one, a Metrics' six, a series bucket's three, the lifetimes' 66)
// are preceded by their forms, 2 bits each, four to a byte, lowest bits first:
//   0 empty (every field 0; nothing follows)
//   1 exact (blocks, bytes; samples = blocks, objects = blocks, objects_var = 0:
//     every count of an --all trace)
//   2 full  (blocks, samples, bytes, f64 objects, f64 objects_var)
//   3 sized (blocks; exact, bytes = blocks x the stack's one size: series only)
// a series bucket's index is the difference from the previous one's + 1 (the
// first: from 0); a timeline has a form byte after its bucket width (1: whole
// numbers, each a zigzag difference from the previous point's); the frame pool
// holds zigzag differences from the previous frame. On the suite's (b) this
// took the compressed index from 425 KB to 234 KB: most of it is the per-stack
// series of exact counts.
//
// Version 4 (docs/FORMAT.md §10): the frame pool and the stacks' (begin,
// size) give way to each stack's frames as the outermost frames it shares with
// the stack before it (varint count), its own frames (varint count, then each
// a zigzag difference from the frame before, outermost first, the first from
// the innermost shared frame or 0); the pool is rebuilt in stack order. A
// timeline of whole numbers has form 2: each value a zigzag difference from a
// prediction (timeline_base). cc1plus's compressed index 1013 -> 541 KB.
#include "analysis/index.h"

#include <array>
#include <cmath>
#include <cstring>
#include <future>
#include <type_traits>

#include "analysis/index_aggregate.h"
#include "format/chunk.h"
#include "format/crc32c.h"
#include "format/varint.h"
#include "format/wire.h"
#include "reader/chunk_io.h"
#include "reader/symbols_decoder.h"

namespace memloupe::analysis {
namespace {

using format::ChunkType;

// Longest name (thread, module path, marker) the decoder accepts.
constexpr uint32_t kMaxName = 1u << 16;

// ---------------------------------------------------------------- chunk hops

// Calls fn(offset, header) for every chunk from the prologue up to `end`.
// Returns false when a header does not parse or a payload runs past the file.
template <class Fn>
bool hop_chunks(std::span<const uint8_t> file, uint64_t end, Fn&& fn) {
  if (file.size() < format::kPrologueSize) return false;
  return reader::walk_chunks(file, format::kPrologueSize, end, reader::BrokenHeader::Stop,
                             [&](const reader::ChunkHop& hop) {
                               if (hop.cut_short) return false;
                               fn(hop.offset, hop.header);
                               return true;
                             })
      .complete;
}

bool is(const format::ChunkHeader& h, ChunkType type) { return h.type == static_cast<uint8_t>(type); }

// The SymbolDef events a Reader delivers from the symbols chunks before `end`
// (the streaming Overview counts them among the events).
uint64_t symbol_entries(std::span<const uint8_t> file, uint64_t end) {
  uint64_t n = 0;
  std::vector<uint8_t> buffer;
  hop_chunks(file, end, [&](uint64_t off, const format::ChunkHeader& h) {
    if (!is(h, ChunkType::Symbols)) return;
    auto chunk = reader::read_chunk(file, off);
    if (!chunk) return;
    auto payload = reader::chunk_payload(*chunk, buffer);
    if (!payload) return;
    const bool packed = chunk->flags & format::kChunkZstd;
    reader::Cursor c(*payload, packed ? off : off + format::kChunkHeaderSize, packed);
    reader::SymbolsDecoder decoder;
    std::optional<Error> err;
    while (decoder.next(c, err) != nullptr) ++n;
  });
  return n;
}

// ---------------------------------------------------------------- encoding

enum CountForm : uint8_t { kEmpty = 0, kExact = 1, kFull = 2, kSized = 3 };

// `unit`: the bytes per block of the group's sized form (0: none).
CountForm form_of(const Count& c, uint64_t unit) {
  if (c.blocks == 0 && c.samples == 0 && c.bytes == 0 && c.objects == 0 && c.objects_var == 0) return kEmpty;
  if (c.samples != c.blocks || c.objects != static_cast<double>(c.blocks) || c.objects_var != 0) return kFull;
  return unit != 0 && c.bytes / unit == c.blocks && c.bytes % unit == 0 ? kSized : kExact;
}

// A stack's series buckets use the sized form with the bytes per block of its
// allocations, when they all have one size (most sites of a program do).
uint64_t unit_size(const StackStats& s) {
  const Count& a = s.metrics[Metric::Allocated];
  return a.blocks != 0 && a.bytes % a.blocks == 0 ? a.bytes / a.blocks : 0;
}

// Writes the latest version only. Each field goes straight into room kept at the end
// of the buffer (vector::insert per field was half of encoding cc1plus's
// 67 k stacks' aggregate).
class Writer {
 public:
  void u8(uint8_t v) {
    *room(1) = v;
    used_ += 1;
  }
  void varint(uint64_t v) {
    uint8_t* const at = room(format::kMaxVarint);
    used_ += static_cast<size_t>(format::put_varint(at, v) - at);
  }
  void u32(uint32_t v) {
    format::put_u32(room(4), v);
    used_ += 4;
  }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    format::put_u64(room(8), bits);
    used_ += 8;
  }
  void raw(std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    std::memcpy(room(bytes.size()), bytes.data(), bytes.size());
    used_ += bytes.size();
  }
  void string(const std::string& s) {
    const size_t n = std::min<size_t>(s.size(), kMaxName);
    varint(n);
    raw({reinterpret_cast<const uint8_t*>(s.data()), n});
  }
  // Counts stored together: their forms, then their fields.
  void counts(std::span<const Count* const> cs, uint64_t unit = 0) {
    for (size_t i = 0; i < cs.size(); i += 4) {
      uint8_t forms = 0;
      for (size_t j = i; j < std::min(cs.size(), i + 4); ++j) forms |= form_of(*cs[j], unit) << 2 * (j - i);
      u8(forms);
    }
    for (const Count* c : cs) {
      const CountForm form = form_of(*c, unit);
      if (form == kEmpty) continue;
      varint(c->blocks);
      if (form == kSized) continue;
      if (form == kFull) varint(c->samples);
      varint(c->bytes);
      if (form == kExact) continue;
      f64(c->objects);
      f64(c->objects_var);
    }
  }
  void count(const Count& c) {
    const Count* one = &c;
    counts({&one, 1});
  }
  void metrics(const Metrics& m) {
    std::array<const Count*, kMetricCount> all;
    for (size_t i = 0; i < kMetricCount; ++i) all[i] = &m.counts[i];
    counts(all);
  }
  // What was written; the writer is done with.
  std::vector<uint8_t> take() && {
    out_.resize(used_);
    return std::move(out_);
  }

 private:
  // Where `n` more bytes go (the buffer doubles when they do not fit).
  uint8_t* room(size_t n) {
    if (out_.size() - used_ < n) out_.resize(std::max(2 * out_.size(), used_ + n + 4096));
    return out_.data() + used_;
  }
  std::vector<uint8_t> out_;  // bytes [0, used_) written, the rest room
  size_t used_ = 0;
};

// A point's values in their stored order.
template <class Point>
auto point_values(Point& p) {
  return std::array{&p.live_end, &p.live_max, &p.live_min, &p.allocated, &p.freed};
}

// Whole numbers of bytes (an --all trace's, and any below 2^53) are stored as
// differences from the point before (timeline form 1); others as f64 (form 0).
constexpr double kExactDoubles = 9007199254740992.0;  // 2^53
bool integral(const Timeline& t) {
  for (const HeapPoint& p : t.points)
    for (const double* v : point_values(p))
      if (!(std::abs(*v) < kExactDoubles) || *v != std::trunc(*v)) return false;
  return true;
}

// A timeline's forms: its values as f64, or as whole numbers each stored as
// the zigzag difference from a base (timeline_base).
enum TimelineForm : uint8_t { kDoubles = 0, kWholeDeltas = 1, kWholePredicted = 2 };

// The order a point's values (point_values: end, max, min, allocated, freed)
// are stored in: in form 2 the end's base needs the allocated and freed bytes,
// and the max's and min's the end.
constexpr std::array<size_t, 5> stored_order(TimelineForm form) {
  return form == kWholePredicted ? std::array<size_t, 5>{3, 4, 0, 1, 2} : std::array<size_t, 5>{0, 1, 2, 3, 4};
}

// The base of value i of a point (the encoder subtracts it, the decoder adds
// it), from the previous point's values and this point's that come before it
// in stored_order(form). Form 1: the previous point's value. Form 2: the end is the
// previous end + allocated - freed (always, for an --all trace: the residual is
// 0), the max is at least the higher and the min at most the lower of the
// previous end and this end, allocated and freed are stored as they are. The
// values are below 2^53 in magnitude, so no sum overflows.
int64_t timeline_base(TimelineForm form, size_t i, const std::array<int64_t, 5>& prev,
                      const std::array<int64_t, 5>& v) {
  if (form == kWholeDeltas) return prev[i];
  switch (i) {
    case 0: return prev[0] + v[3] - v[4];
    case 1: return std::max(prev[0], v[0]);
    case 2: return std::min(prev[0], v[0]);
    default: return 0;
  }
}

void encode_timeline(Writer& w, const Timeline& t) {
  w.varint(t.bucket_ns);
  const TimelineForm form = integral(t) ? kWholePredicted : kDoubles;
  w.u8(form);
  w.varint(t.points.size());
  std::array<int64_t, 5> prev{}, v{};
  for (const HeapPoint& p : t.points) {
    const auto values = point_values(p);
    if (form == kDoubles) {
      for (const double* x : values) w.f64(*x);
      continue;
    }
    for (size_t i = 0; i < values.size(); ++i) v[i] = static_cast<int64_t>(*values[i]);
    for (size_t i : stored_order(form)) w.varint(format::zigzag(v[i] - timeline_base(form, i, prev, v)));
    prev = v;
  }
}

void encode_overview(Writer& w, const Overview& o) {
  w.varint(o.duration_ns);
  w.u8(o.end_reason ? static_cast<uint8_t>(1 + static_cast<uint8_t>(*o.end_reason)) : 0);
  w.varint(o.events);
  w.varint(o.alloc_events);
  w.varint(o.free_events);
  w.varint(o.unmatched_frees);
  w.varint(o.time_inversions);
  w.varint(o.threads.size());
  for (const ThreadInfo& t : o.threads) {
    w.varint(t.os_tid);
    w.string(t.name);
    w.varint(t.start_ns);
    w.u8(t.end_ns.has_value());
    if (t.end_ns) w.varint(*t.end_ns);
  }
  w.varint(o.modules.size());
  for (const ModuleInfo& m : o.modules) {
    w.varint(m.start);
    w.varint(m.end);
    w.varint(m.load_bias);
    w.string(m.path);
    w.string(m.build_id);
    w.varint(m.load_ns);
    w.varint(m.unload_ns);
  }
  w.varint(o.markers.size());
  for (const MarkerInfo& m : o.markers) {
    w.varint(m.thread.value);
    w.varint(m.time_ns);
    w.string(m.name);
  }
  w.u8(o.call_totals.has_value());
  if (o.call_totals) {
    w.varint(o.call_totals->time_ns);
    w.varint(format::kFuncCount);
    for (const format::FuncTotal& f : o.call_totals->totals) {
      w.varint(f.calls);
      w.varint(f.bytes);
    }
  }
  w.count(o.allocated);
  w.count(o.leaked);
  w.varint(o.peak.time_ns);
  w.varint(o.peak.alloc ? o.peak.alloc->value + 1 : 0);
  w.count(o.peak.live);
  encode_timeline(w, o.heap);
  w.varint(o.rss.size());
  for (const format::RssSample& r : o.rss) {
    w.varint(r.time_ns);
    w.varint(r.rss_bytes);
  }
  w.varint(o.peak_rss);
  w.count(o.mapped.allocated);
  w.count(o.mapped.leaked);
  w.count(o.mapped.peak);
  w.varint(o.mapped.peak_ns);
  encode_timeline(w, o.mapped.series);
  w.f64(o.mapped.combined_peak_bytes);
  w.varint(o.mapped.combined_peak_ns);
}

// The lifetime histogram's counts in their stored order.
template <class Histogram>
auto lifetime_counts(Histogram& h) {
  using C = std::conditional_t<std::is_const_v<Histogram>, const Count, Count>;
  std::array<C*, LifetimeHistogram::kBuckets + 1> all;
  for (size_t i = 0; i < h.kBuckets; ++i) all[i] = &h.freed[i];
  all.back() = &h.never_freed;
  return all;
}

// Each stack's frames: the outermost ones it shares with the stack before it,
// then its own, outermost first, as differences from the frame before (the
// first from the innermost shared frame, or 0). Stacks are numbered as they
// were first seen, so neighbours share most of their callers (cc1plus: 83% of
// its 3.1 M frames); a trie of all the stacks before would find 87%, and its
// compressed frames would be 5% smaller, for a hash lookup per frame.
void encode_stack_frames(Writer& w, const Aggregate& a) {
  std::span<const uint64_t> before;
  for (uint32_t i = 0; i < a.stacks.size(); ++i) {
    const std::span<const uint64_t> f = a.frames(StackId{i});
    size_t shared = 0;
    while (shared < f.size() && shared < before.size() &&
           f[f.size() - 1 - shared] == before[before.size() - 1 - shared])
      ++shared;
    w.varint(shared);
    w.varint(f.size() - shared);
    uint64_t prev = shared == 0 ? 0 : f[f.size() - shared];
    for (size_t d = f.size() - shared; d-- > 0;) {
      w.varint(format::zigzag(static_cast<int64_t>(f[d] - prev)));
      prev = f[d];
    }
    before = f;
  }
}

void encode_aggregate(Writer& w, const Aggregate& a) {
  w.varint(a.series_buckets);
  w.varint(a.series_bucket_ns);
  w.varint(a.stacks.size());
  encode_stack_frames(w, a);
  for (const StackStats& s : a.stacks) {
    w.metrics(s.metrics);
    w.varint(s.series.size());
    uint64_t next = 0;  // the lowest index the next bucket can have
    for (const SeriesBucket& b : s.series) {
      w.varint(b.index - next);
      next = uint64_t{b.index} + 1;
      const Count* counts[] = {&b.allocated, &b.freed, &b.leaked};
      w.counts(counts, unit_size(s));
    }
  }
  w.varint(a.threads.size());
  for (const ThreadStats& t : a.threads) {
    w.varint(t.thread.value);
    w.metrics(t.metrics);
  }
  w.metrics(a.totals);
  w.counts(lifetime_counts(a.lifetimes));
  w.varint(a.rejected_blocks);
  w.count(a.immediate);
}

// ---------------------------------------------------------------- decoding

// Reads fields with bounds checks; the first failure is kept with its offset
// and every later read fails.
class Parser {
 public:
  Parser(reader::Cursor in, const Estimator& estimator) : in_(in), estimator_(estimator) {}
  // Fields are read in the form of this index version (2 to 4).
  void set_version(uint64_t version) { version_ = version; }
  uint64_t version() const { return version_; }

  bool fail(const std::string& what) {
    if (!error_) error_ = Error{in_.where() + ": expected " + what, in_.file_offset()};
    return false;
  }
  const std::optional<Error>& error() const { return error_; }
  bool at_end() const { return in_.at_end(); }

  bool u8(uint8_t& v, const char* what) { return ok() && (in_.u8(v) || fail(what)); }
  bool varint(uint64_t& v, const char* what) { return ok() && (in_.varint(v) || fail(what)); }
  template <class T>
  bool varint_max(T& v, uint64_t max, const std::string& what) {
    uint64_t w = 0;
    if (!ok()) return false;
    if (!in_.varint(w) || w > max) return fail(what + " (at most " + std::to_string(max) + ")");
    v = static_cast<T>(w);
    return true;
  }
  bool u32(uint32_t& v, const char* what) { return ok() && (in_.u32(v) || fail(what)); }
  bool f64(double& v, const char* what) {
    uint64_t bits = 0;
    if (!ok() || !in_.u64(bits)) return fail(what);
    std::memcpy(&v, &bits, 8);
    return std::isfinite(v) || fail(std::string(what) + " (a finite number)");
  }
  bool string(std::string& s, const char* what) {
    std::string_view v;
    if (!ok() || !in_.string(v, kMaxName)) return fail(what);
    s.assign(v);
    return true;
  }
  // A list length: each element takes at least `min_bytes`, so a count the
  // payload cannot hold is refused before anything is allocated for it.
  bool length(size_t& n, uint64_t max, size_t min_bytes, const std::string& what) {
    uint64_t w = 0;
    if (!varint_max(w, max, "the number of " + what)) return false;
    if (w > in_.remaining() / min_bytes) return fail("at most " + std::to_string(in_.remaining() / min_bytes) + " " + what + " (the rest of the payload)");
    n = static_cast<size_t>(w);
    return true;
  }
  // The index is written only for traces sampled at one rate (IndexBuilder), so
  // a count's weighted sums follow from its samples.
  bool counts(std::span<Count* const> cs, uint64_t unit = 0) {
    std::array<uint8_t, LifetimeHistogram::kBuckets + 1> forms;  // the largest group
    if (cs.size() > forms.size()) return fail("at most " + std::to_string(forms.size()) + " counts together");
    uint8_t byte = 0;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (version_ < 3) {
        forms[i] = kFull;
        continue;
      }
      if (i % 4 == 0 && !u8(byte, "the forms of the next counts")) return false;
      forms[i] = (byte >> 2 * (i % 4)) & 3;
      if (forms[i] == kSized && unit == 0) return fail("a count form of 0 (empty), 1 (exact) or 2 (full)");
    }
    for (size_t i = 0; i < cs.size(); ++i) {
      Count& c = *cs[i];
      c = Count{};
      if (forms[i] == kSized) {
        if (!varint_max(c.blocks, UINT64_MAX / unit, "a block count")) return false;
        c.bytes = c.blocks * unit;
      } else if (forms[i] != kEmpty &&
                 (!varint(c.blocks, "a block count") || (forms[i] == kFull && !varint(c.samples, "a sample count")) ||
                  !varint(c.bytes, "a byte count"))) {
        return false;
      }
      if (forms[i] == kExact || forms[i] == kSized) {
        c.samples = c.blocks;
        c.objects = static_cast<double>(c.blocks);
      } else if (forms[i] == kFull && (!f64(c.objects, "an object estimate") || !f64(c.objects_var, "an object variance"))) {
        return false;
      }
      estimator_.weigh_at_header_rate(c);
    }
    return true;
  }
  bool count(Count& c) {
    Count* one = &c;
    return counts({&one, 1});
  }
  bool metrics(Metrics& m) {
    std::array<Count*, kMetricCount> all;
    for (size_t i = 0; i < kMetricCount; ++i) all[i] = &m.counts[i];
    return counts(all);
  }
  // The fewest bytes `n` counts stored together take, for the list length checks.
  size_t count_bytes(size_t n) const { return version_ < 3 ? n * (3 + 16) : (n + 3) / 4; }

 private:
  bool ok() const { return !error_; }
  reader::Cursor in_;
  const Estimator& estimator_;
  uint64_t version_ = kIndexVersion;
  std::optional<Error> error_;
};

bool decode_timeline(Parser& p, Timeline& t, const char* what) {
  size_t n = 0;
  uint8_t form = kDoubles;  // from version 3 on: the timeline's form (encode_timeline)
  if (!p.varint(t.bucket_ns, "a series' bucket width")) return false;
  if (t.bucket_ns == 0) return p.fail("a bucket width of at least 1 ns");
  if (p.version() >= 3 && !p.u8(form, "a series' form")) return false;
  const uint8_t max_form = p.version() >= 4 ? kWholePredicted : kWholeDeltas;
  if (form > max_form)
    return p.fail("a series form of 0 (f64), 1 (whole numbers)" + std::string(max_form == 2 ? " or 2 (predicted)" : ""));
  if (!p.length(n, kMaxTimelinePoints, form == kDoubles ? 40 : 5, what)) return false;
  t.points.resize(n);
  std::array<int64_t, 5> prev{}, v{};
  for (HeapPoint& h : t.points) {
    const auto values = point_values(h);
    if (form == kDoubles) {
      for (double* x : values)
        if (!p.f64(*x, "a series value")) return false;
      continue;
    }
    for (size_t i : stored_order(static_cast<TimelineForm>(form))) {
      uint64_t z = 0;
      if (!p.varint(z, "a series value's difference (varint)")) return false;
      const int64_t d = format::unzigzag(z);
      // A base is within ±3 x 2^53 (timeline_base), the difference within
      // ±4 x 2^53: no sum overflows, and the value is within ±2^53 as written.
      constexpr auto kLimit = static_cast<int64_t>(kExactDoubles);
      const int64_t base = timeline_base(static_cast<TimelineForm>(form), i, prev, v);
      if (d <= -4 * kLimit || d >= 4 * kLimit || std::abs(base + d) >= kLimit)
        return p.fail("a series value below 2^53 in magnitude");
      v[i] = base + d;
      *values[i] = static_cast<double>(v[i]);
    }
    prev = v;
  }
  return true;
}

bool decode_overview(Parser& p, Overview& o) {
  uint8_t end = 0;
  if (!p.varint(o.duration_ns, "the duration") || !p.u8(end, "the end reason")) return false;
  if (end > 1 + static_cast<uint8_t>(format::EndReason::Exec)) return p.fail("an end reason of at most 4");
  if (end != 0) o.end_reason = static_cast<format::EndReason>(end - 1);
  if (!p.varint(o.events, "the event count") || !p.varint(o.alloc_events, "the allocation count") ||
      !p.varint(o.free_events, "the free count") || !p.varint(o.unmatched_frees, "the unmatched frees") ||
      !p.varint(o.time_inversions, "the time inversions"))
    return false;
  size_t n = 0;
  if (!p.length(n, uint64_t{1} << 20, 4, "threads")) return false;
  o.threads.resize(n);
  for (size_t i = 0; i < n; ++i) {
    ThreadInfo& t = o.threads[i];
    t.id = format::ThreadId{static_cast<uint32_t>(i)};
    uint8_t has_end = 0;
    if (!p.varint_max(t.os_tid, UINT32_MAX, "a thread's os tid") || !p.string(t.name, "a thread name") ||
        !p.varint(t.start_ns, "a thread's start") || !p.u8(has_end, "a thread's end flag"))
      return false;
    if (has_end > 1) return p.fail("a thread end flag of 0 or 1");
    if (has_end) {
      uint64_t e = 0;
      if (!p.varint(e, "a thread's end")) return false;
      t.end_ns = e;
    }
  }
  if (!p.length(n, UINT32_MAX, 7, "modules")) return false;
  o.modules.resize(n);
  for (ModuleInfo& m : o.modules) {
    if (!p.varint(m.start, "a module start") || !p.varint(m.end, "a module end") ||
        !p.varint(m.load_bias, "a load bias") || !p.string(m.path, "a module path") ||
        !p.string(m.build_id, "a build id") || !p.varint(m.load_ns, "a module load time") ||
        !p.varint(m.unload_ns, "a module unload time"))
      return false;
  }
  if (!p.length(n, kMaxMarkers, 3, "markers")) return false;
  o.markers.resize(n);
  for (MarkerInfo& m : o.markers) {
    if (!p.varint_max(m.thread.value, UINT32_MAX, "a marker's thread") ||
        !p.varint(m.time_ns, "a marker's time") || !p.string(m.name, "a marker name"))
      return false;
  }
  uint8_t has_totals = 0;
  if (!p.u8(has_totals, "the call totals flag")) return false;
  if (has_totals > 1) return p.fail("a call totals flag of 0 or 1");
  if (has_totals) {
    format::CallTotals totals;
    if (!p.varint(totals.time_ns, "the call totals' time")) return false;
    uint32_t funcs = 0;
    if (!p.varint_max(funcs, format::kFuncCount, "the call totals' function count")) return false;
    for (unsigned i = 0; i < funcs; ++i) {
      format::FuncTotal& f = totals.totals[i];
      if (!p.varint(f.calls, "a call count") || !p.varint(f.bytes, "a requested byte count")) return false;
    }
    o.call_totals = totals;
  }
  uint64_t peak_alloc = 0;
  if (!p.count(o.allocated) || !p.count(o.leaked) || !p.varint(o.peak.time_ns, "the peak's time") ||
      !p.varint(peak_alloc, "the peak's allocation") || !p.count(o.peak.live))
    return false;
  if (peak_alloc != 0) o.peak.alloc = format::AllocId{peak_alloc - 1};
  if (!decode_timeline(p, o.heap, "heap points")) return false;
  if (!p.length(n, kMaxTimelinePoints, 2, "RSS samples")) return false;
  o.rss.resize(n);
  for (format::RssSample& r : o.rss) {
    if (!p.varint(r.time_ns, "an RSS sample's time") || !p.varint(r.rss_bytes, "an RSS value")) return false;
  }
  if (!p.varint(o.peak_rss, "the peak RSS")) return false;
  MappedMemory& m = o.mapped;
  return p.count(m.allocated) && p.count(m.leaked) && p.count(m.peak) &&
         p.varint(m.peak_ns, "the mapped peak's time") && decode_timeline(p, m.series, "mapped points") &&
         p.f64(m.combined_peak_bytes, "the combined peak") &&
         p.varint(m.combined_peak_ns, "the combined peak's time");
}

// Version 4's stacks' frames (encode_stack_frames) into a pool in stack order.
// A stack has at most kMaxFrames frames and takes at least 2 bytes, so the pool
// is bounded by the payload (as the events' stacks are: a cached backtrace can
// add one frame to a deep one).
bool decode_stack_frames(Parser& p, Aggregate& a) {
  std::vector<uint64_t>& pool = a.frame_pool;
  uint64_t before = 0, before_size = 0;  // the previous stack's frames in the pool
  for (StackStats& s : a.stacks) {
    uint64_t shared = 0, own = 0;
    if (!p.varint_max(shared, before_size, "the frames a stack shares with the one before (at most its frames)") ||
        !p.varint_max(own, format::kMaxFrames - shared, "a stack's own frames (with the shared ones, at most 256)"))
      return false;
    const uint64_t begin = pool.size();
    if (begin + own + shared > UINT32_MAX) return p.fail("at most 2^32 - 1 frames in all");
    pool.resize(begin + own + shared);
    uint64_t prev = shared == 0 ? 0 : pool[before + before_size - shared];
    for (uint64_t d = own; d-- > 0;) {  // stored outermost first; the pool holds them innermost first
      uint64_t z = 0;
      if (!p.varint(z, "a frame's difference from the one before (varint)")) return false;
      pool[begin + d] = prev += static_cast<uint64_t>(format::unzigzag(z));  // (wraps as written)
    }
    std::copy_n(pool.begin() + static_cast<ptrdiff_t>(before + before_size - shared), shared,
                pool.begin() + static_cast<ptrdiff_t>(begin + own));
    s.frames_begin = static_cast<uint32_t>(begin);
    s.frames_size = static_cast<uint32_t>(own + shared);
    before = begin;
    before_size = own + shared;
  }
  return true;
}

bool decode_aggregate(Parser& p, Aggregate& a, uint32_t key_series) {
  if (!p.varint_max(a.series_buckets, key_series, "the series' bucket count") ||
      !p.varint(a.series_bucket_ns, "the series' bucket width"))
    return false;
  if (a.series_buckets != key_series) return p.fail("the key's bucket count, " + std::to_string(key_series));
  if (a.series_bucket_ns == 0) return p.fail("a bucket width of at least 1 ns");
  size_t n = 0;
  if (p.version() < 4) {
    if (!p.length(n, UINT32_MAX, 1, "frames")) return false;
    a.frame_pool.resize(n);
    uint64_t prev = 0;
    for (uint64_t& f : a.frame_pool) {
      if (!p.varint(f, "a frame")) return false;
      if (p.version() >= 3) f = prev += static_cast<uint64_t>(format::unzigzag(f));  // (wraps as written)
    }
  }
  // Each stack takes at least 2 bytes for its frames (v4) or their place in
  // the pool (v2, v3), its counts' forms and its series' length.
  if (!p.length(n, UINT32_MAX, 2 + p.count_bytes(kMetricCount) + 1, "stacks")) return false;
  a.stacks.resize(n);
  if (p.version() >= 4 && !decode_stack_frames(p, a)) return false;
  for (StackStats& s : a.stacks) {
    if (p.version() < 4 &&
        (!p.varint_max(s.frames_begin, a.frame_pool.size(), "a stack's first frame") ||
         !p.varint_max(s.frames_size, std::min<uint64_t>(format::kMaxFrames, a.frame_pool.size() - s.frames_begin),
                       "a stack's frame count (within the frame pool)")))
      return false;
    if (!p.metrics(s.metrics)) return false;
    size_t m = 0;
    if (!p.length(m, a.series_buckets, 1 + p.count_bytes(3), "series buckets")) return false;
    s.series.resize(m);
    for (size_t i = 0; i < m; ++i) {
      SeriesBucket& b = s.series[i];
      const uint64_t min = i == 0 ? 0 : uint64_t{s.series[i - 1].index} + 1;
      if (p.version() >= 3) {
        uint64_t gap = 0;
        if (!p.varint_max(gap, a.series_buckets - 1, "a series bucket's gap from the previous one")) return false;
        if (min + gap >= a.series_buckets) return p.fail("a series bucket index below " + std::to_string(a.series_buckets));
        b.index = static_cast<uint32_t>(min + gap);
      } else if (!p.varint_max(b.index, a.series_buckets - 1, "a series bucket index")) {
        return false;
      }
      if (b.index < min) return p.fail("series bucket indexes in increasing order");
      Count* counts[] = {&b.allocated, &b.freed, &b.leaked};
      if (!p.counts(counts, p.version() >= 3 ? unit_size(s) : 0)) return false;
    }
  }
  if (!p.length(n, uint64_t{1} << 20, 1 + p.count_bytes(kMetricCount), "threads")) return false;
  a.threads.resize(n);
  for (ThreadStats& t : a.threads)
    if (!p.varint_max(t.thread.value, UINT32_MAX, "a thread") || !p.metrics(t.metrics)) return false;
  if (!p.metrics(a.totals)) return false;
  return p.counts(lifetime_counts(a.lifetimes)) && p.varint(a.rejected_blocks, "the rejected block count") &&
         p.count(a.immediate);
}

// The index's query: the defaults, with the report's series.
QueryArgs index_args() {
  QueryArgs args;
  args.series_buckets = kIndexSeriesBuckets;
  return args;
}

// True when the index's Aggregate is the one `q` asks for.
bool answers(const Query& q, const IndexKey& key) {
  const Filter& f = q.filter;
  return !f.window && f.kind == BlockKind::All && f.min_size == 0 && f.max_size == kForever && f.min_lifetime_ns == 0 &&
         f.max_lifetime_ns == kForever && !f.thread && f.focus.empty() && !q.live_window &&
         q.temporary_ns == key.temporary_ns && (q.series_buckets == 0 || q.series_buckets == key.series_buckets);
}

}  // namespace

IndexFingerprint index_fingerprint(std::span<const uint8_t> file, uint64_t end) {
  IndexFingerprint fp;
  hop_chunks(file, end, [&fp](uint64_t, const format::ChunkHeader& h) {
    if (is(h, ChunkType::Events) || is(h, ChunkType::EventsColumns)) ++fp.event_chunks;
    uint8_t crc[4];
    format::put_u32(crc, h.payload_crc);
    fp.crc = format::crc32c(crc, 4, fp.crc);
  });
  return fp;
}

namespace {

// The index up to its aggregate: all of it that depends on the file it ends
// (the fingerprint, the events' count), so the aggregate can be encoded
// before that file is finished (IndexBuilder::events_over).
void encode_head(Writer& w, const Index& index) {
  w.varint(kIndexVersion);
  w.varint(index.fingerprint.event_chunks);
  w.u32(index.fingerprint.crc);
  w.varint(index.key.temporary_ns);
  w.varint(index.key.series_buckets);
  encode_overview(w, index.overview);
}

}  // namespace

std::vector<uint8_t> encode_index(const Index& index) {
  Writer w;
  encode_head(w, index);
  encode_aggregate(w, index.aggregate);
  return std::move(w).take();
}

Expected<Index> decode_index(reader::Cursor in, const format::TraceInfo& info) {
  const Estimator estimator(info);
  Parser p(in, estimator);
  Index index;
  uint64_t version = 0;
  if (!p.varint(version, "the index version")) return *p.error();
  if (version < 2 || version > kIndexVersion) {
    p.fail("index version 2 to " + std::to_string(kIndexVersion) + ", found " + std::to_string(version));
    return *p.error();
  }
  p.set_version(version);
  if (p.varint(index.fingerprint.event_chunks, "the fingerprint's chunk count") &&
      p.u32(index.fingerprint.crc, "the fingerprint's CRC") &&
      p.varint(index.key.temporary_ns, "the key's temporary threshold") &&
      p.varint_max(index.key.series_buckets, 1u << 16, "the key's bucket count") &&
      decode_overview(p, index.overview) && decode_aggregate(p, index.aggregate, index.key.series_buckets) &&
      !p.at_end())
    p.fail("the end of the index payload");
  if (p.error()) return *p.error();
  index.overview.info = info;
  index.overview.estimator = estimator;
  index.aggregate.estimator = estimator;
  return index;
}

// ---------------------------------------------------------------- building

// The index's query resolves without the Overview (resolve() looks at it only
// for times and lifetimes, which the index's query has none of); its series
// get their width when the events are over (aggregate.h, pass 2 as it streams).
namespace {
Query index_query() { return resolve(index_args(), Overview{}).value(); }  // the defaults always resolve
}  // namespace

struct IndexBuilder::Impl {
  Impl(const format::TraceInfo& info, IndexWhen when) : when(when), query(index_query()), model(info, query) {}
  IndexWhen when;
  Query query;
  ThreadedOverview model;  // the Overview and the Aggregate, as the events come
  std::optional<ThreadedOverview::Result> result;
  // The index stores each Count without its per-block weights: a trace whose
  // rate changed (memloupe_set_rate) gets no index, and its views read the events.
  bool rate_changed = false;
  // The result's aggregate encoded, on a thread of its own from events_over()
  // on: it needs nothing of the finished file, so it is encoded while the
  // finaliser makes the snapshots' annex and the symbols (~50 ms after
  // cc1plus's exit, docs/RECORDER.md). Last: destroyed (waited for) first.
  std::future<std::vector<uint8_t>> aggregate_bytes;
};

IndexBuilder::IndexBuilder(const format::TraceInfo& info, IndexWhen when)
    : impl_(std::make_unique<Impl>(info, when)), model_(&impl_->model) {}
IndexBuilder::~IndexBuilder() = default;

void IndexBuilder::add(const format::Event& event, const reader::BacktraceKey& key) {
  if (std::holds_alternative<format::RateChange>(event)) impl_->rate_changed = true;
  impl_->model.add(event, key);
}

void IndexBuilder::rest_at_once() { impl_->model.use_worker(); }

void IndexBuilder::events_over() {
  Impl& s = *impl_;
  if (s.result) return;
  s.result = std::move(s.model).finish();
  if (s.rate_changed) return;
  s.aggregate_bytes = std::async(std::launch::async, [&aggregate = s.result->aggregate] {
    Writer w;
    encode_aggregate(w, aggregate);
    return std::move(w).take();
  });
}

bool IndexBuilder::for_each_live(const AggregateBuilder::LiveBlockFn& fn) const {
  return impl_->result && impl_->model.for_each_live(fn);
}

std::optional<std::vector<uint8_t>> IndexBuilder::finish(std::span<const uint8_t> trace) {
  Impl& s = *impl_;
  if (s.rate_changed) return std::nullopt;
  events_over();
  Index head;  // all but the aggregate, encoded already
  head.overview = std::move(s.result->overview);
  head.overview.events += symbol_entries(trace, trace.size());
  if (s.when == IndexWhen::Never || (s.when == IndexWhen::IfItPays && !index_pays(head.overview.events)))
    return std::nullopt;
  head.fingerprint = index_fingerprint(trace, trace.size());
  head.key = IndexKey{s.query.temporary_ns, s.query.series_buckets};
  Writer w;
  encode_head(w, head);
  // The head goes in front of the aggregate's bytes, in the room their
  // buffer kept from its doubling when there is some: a memmove in place
  // rather than a new buffer zero-filled, page-faulted and copied into
  // (cc1plus's 10.9 MB, serial after its exit).
  std::vector<uint8_t> out = s.aggregate_bytes.get();
  const std::vector<uint8_t> head_bytes = std::move(w).take();
  out.insert(out.begin(), head_bytes.begin(), head_bytes.end());
  return out;
}

// ---------------------------------------------------------------- using

IndexLookup find_index(std::span<const uint8_t> file, const format::TraceInfo& info) {
  IndexLookup out;
  // The index chunks that end the file, in order (one, unless the index is
  // larger than a chunk's limit).
  std::vector<uint64_t> parts;
  if (!hop_chunks(file, file.size(), [&](uint64_t off, const format::ChunkHeader& h) {
        if (!is(h, ChunkType::AnalysisIndex)) parts.clear();
        else parts.push_back(off);
      }))
    return out;  // damage: the streaming pass reports it
  if (parts.empty()) return out;
  const uint64_t first = parts.front();
  out.offset = first;
  auto damaged = [&out](const Error& e) {
    out.state = IndexLookup::State::Damaged;
    out.problem = e.message;
    return out;
  };
  // Each part is at most kMaxChunkRaw raw bytes, and there are at most as many
  // parts as the file has chunk headers: the whole is bounded by the file.
  std::vector<uint8_t> whole, buffer;
  bool packed = false;
  for (uint64_t off : parts) {
    auto chunk = reader::read_chunk(file, off);
    if (!chunk) return damaged(chunk.error());
    auto payload = reader::chunk_payload(*chunk, buffer);
    if (!payload) return damaged(payload.error());
    packed = packed || (chunk->flags & format::kChunkZstd) || parts.size() > 1;
    whole.insert(whole.end(), payload->begin(), payload->end());
  }
  // Offsets in errors: the file's, for one stored chunk; else within the payload.
  auto index = decode_index(reader::Cursor(whole, packed ? first : first + format::kChunkHeaderSize, packed), info);
  if (!index) return damaged(index.error());
  if (index->fingerprint != index_fingerprint(file, first)) {
    out.state = IndexLookup::State::Stale;
    out.problem = "at offset " + std::to_string(first) +
                  ": it was built for other events (its fingerprint does not match the chunks before it)";
    return out;
  }
  // The fingerprint covers the headers only: a payload damaged behind an intact
  // header would be answered from the index without a word, where streaming
  // reports the damage and analyses what comes before it. The stored payloads'
  // CRCs are checked too: one read of the file, no decompression (a few
  // milliseconds per 10 MB, against the seconds that decoding the events takes).
  std::optional<uint64_t> bad;
  hop_chunks(file, first, [&](uint64_t off, const format::ChunkHeader& h) {
    const uint8_t* payload = file.data() + off + format::kChunkHeaderSize;
    if (!bad && format::crc32c(payload, h.stored_len) != h.payload_crc) bad = off;
  });
  if (bad) {
    out.state = IndexLookup::State::Damaged;
    out.problem = "the chunk at offset " + std::to_string(*bad) + " does not match its CRC-32C";
    return out;
  }
  out.state = IndexLookup::State::Fresh;
  out.index = std::move(*index);
  return out;
}

std::optional<Model> model_from_index(Index index, const QueryArgs& args, const reader::SymbolTable& symbols) {
  Expected<Query> query = resolve(args, index.overview);
  if (!query || !answers(*query, index.key)) return std::nullopt;
  Model model;
  model.overview = std::move(index.overview);
  model.aggregate = std::move(index.aggregate);
  Aggregate& a = model.aggregate;
  a.query = *query;
  if (query->series_buckets == 0) {  // as a pass without series leaves them
    for (StackStats& s : a.stacks) s.series.clear();
    a.series_buckets = 0;
    a.series_bucket_ns = 1;
  }
  model.symbols = symbols;
  model.tree = build_call_tree(a, model.symbols, model.overview.modules);
  model.from_index = true;
  return model;
}

}  // namespace memloupe::analysis
