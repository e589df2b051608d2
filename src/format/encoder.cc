// Event encoding (docs/FORMAT.md, "Events"). An event is one header byte,
//
//      7     5   4   3      0
//     +-------+----+--------+
//     | code  |more| dt low |     dt: time since the previous event, in ticks
//     +-------+----+--------+     of the header's time unit; `more`: varint(dt >> 4) follows
//
// then its fields. The cheapest allocation, a repeat of a cached backtrace with
// the same size and function, costs 3 bytes (header + slot word).
#include "format/encoder.h"

#include <algorithm>
#include <bit>

#include <memory>

#include "format/encoder_state.h"

namespace memloupe::format {

// Picks the shortest address form and stores it in bits kAddrShift.. of the
// flags byte at `flags_at` (the low byte of an AllocCached word).
// Sets `newest` for on_alloc (AllocHistory::find_freed). Inline in alloc(),
// as alloc() is in Encoder::alloc and realloc, and hash_of's memo in alloc():
// the three calls, their frames and saved registers were ~50 instructions an
// allocation on (a)'s flush thread (docs/RECORDER.md, "The flush thread per
// record, 2026-11-26 (eighth round)").
[[gnu::always_inline]] inline void encoder_detail::State::address(Out& o, uint8_t* flags_at, uint64_t size,
                                                                  uint64_t addr, unsigned& newest) noexcept {
  if (!addresses) return;
  uint8_t*& p = o[Stream::Addr];
  AddrForm form;
  const AllocHistory::FreedMatch m = history.find_freed(size, thread, addr);
  newest = m.newest;
  const unsigned k = m.index;
  if (k == 0) {
    form = AddrForm::Freed;
  } else if (k != AllocHistory::kNone) {
    form = AddrForm::FreedNth;
    p = put_varint(p, k - 1);
  } else {
    const uint64_t near_class =
        zigzag(static_cast<int64_t>(addr - history.class_previous(size)));
    const uint64_t near_carve = zigzag(static_cast<int64_t>(addr - history.thread_carve(thread)));
    form = near_class < near_carve ? AddrForm::NearClass : AddrForm::NearCarve;
    p = put_varint(p, near_class < near_carve ? near_class : near_carve);
  }
  *flags_at = static_cast<uint8_t>(*flags_at | static_cast<unsigned>(form) << kAddrShift);
}

// varint common prefix | varint new frames | codewords (frame_cache.h).
void encoder_detail::State::backtrace(Out& o, std::span<const uint64_t> bt) noexcept {
  uint8_t*& p = o[Stream::Stack];
  const unsigned n = static_cast<unsigned>(bt.size());
  unsigned common = 0;
  while (common < n && common < prev_n && prev_outer[common] == bt[n - 1 - common]) ++common;
  for (unsigned i = common; i < n; ++i) prev_outer[i] = bt[n - 1 - i];
  p = put_varint(p, common);
  p = put_varint(p, n - common);
  const uint16_t ctx = common ? prev_slots[common - 1] : 0;
  p = frames.encode(prev_outer, common, n, ctx, prev_slots, p);
  prev_n = n;
}

[[gnu::always_inline]] inline AllocId encoder_detail::State::alloc(Out& o, const AllocRecord& r) noexcept {
  std::span<const uint64_t> bt = r.backtrace;
  if (bt.size() > kMaxFrames) bt = bt.first(kMaxFrames);
  const uint64_t hash = hash_of(bt, r.prefix);
  const unsigned w1 = backtrace_way1(hash), w2 = backtrace_way2(hash);
  auto holds = [&](const BtEntry& e) { return e.used && e.hash == hash && e.depth == bt.size(); };
  const unsigned slot = holds(bt_cache[w1])                  ? w1
                        : holds(bt_cache[w2])                ? w2
                        : !bt_cache[w1].used                 ? w1
                        : !bt_cache[w2].used                 ? w2
                        : bt_cache[w1].date <= bt_cache[w2].date ? w1
                                                             : w2;
  BtEntry& e = bt_cache[slot];
  // Without addresses the history keeps no freed lists (address 0: history.h).
  const uint64_t addr = addresses ? r.address : 0;
  uint8_t flags = r.n_samples != 1 ? kHasSamples : 0;

  uint8_t* flags_at;
  const bool cached = holds(e);
  if (cached) {
    if (r.size != e.size) flags |= kHasSize;
    if (r.func != e.func) flags |= kHasFunc;
    if (r.alignment != e.align) flags |= kHasAlign;
    const bool extra = flags & (kHasFunc | kHasAlign);
    timed(o, extra ? Code::AllocCachedX : Code::AllocCached, r.time_ns);
    uint8_t*& w = o[Stream::Word];
    flags_at = w;
    w = put_u16(w, static_cast<uint16_t>(slot << kSlotShift | (flags & 0xf)));
    if (extra) *w++ = static_cast<uint8_t>(flags >> 4);
  } else {
    if (r.func != last_alloc_func) flags |= kHasFunc;
    if (r.alignment != 0) flags |= kHasAlign;
    timed(o, Code::Alloc, r.time_ns);
    uint8_t*& w = o[Stream::Word];
    flags_at = w;
    *w++ = flags;
    flags |= kHasSize;
    e = {hash, 0, 0, 0, static_cast<uint16_t>(bt.size()), r.func, true};
  }
  // Each cursor named once (not `o[s] = put_varint(o[s], v)`): Out's
  // operator[] tests the row form's flag, which gcc loads again after the
  // bytes' stores, since they may alias it.
  if (flags & kHasSize) {
    uint8_t*& p = o[Stream::Size];
    p = put_varint(p, r.size);
  }
  if (flags & (kHasFunc | kHasAlign | kHasSamples)) {
    uint8_t*& p = o[Stream::Misc];
    if (flags & kHasFunc) *p++ = static_cast<uint8_t>(r.func);
    if (flags & kHasAlign) p = put_varint(p, r.alignment);
    if (flags & kHasSamples) p = put_varint(p, r.n_samples);
  }
  unsigned newest = AllocHistory::kScan;
  address(o, flags_at, r.size, addr, newest);
  if (!cached) backtrace(o, bt);
  e.size = r.size;
  e.func = r.func;
  e.align = r.alignment;
  e.date = static_cast<uint32_t>(next_id + 1);
  last_alloc_func = r.func;
  const uint64_t id = next_id++;
  history.on_alloc(id, r.size, addr, r.func, thread, newest);
  return AllocId{id};
}

void Encoder::start(ChunkSink& sink, Mode mode, Options options) noexcept {
  state_.sink = &sink;
  state_.mode = mode;
  state_.addresses = mode == Mode::All && options.addresses;
  state_.columns = options.columns;
  state_.out.rows = !options.columns;
  state_.b = &buffers_;
  state_.lane_bound = options.columns ? lane_bound(mode) : 1;
  state_.unit_shift = static_cast<unsigned>(std::bit_width(encodable_time_unit(options.time_unit_us)) - 1);
}

uint32_t encodable_time_unit(uint64_t us) noexcept {
  return static_cast<uint32_t>(std::bit_floor(std::clamp<uint64_t>(us, 1, kMaxTimeUnitUs)));
}

void Encoder::reset() noexcept {
  // Not `state_ = State{}`: a 0.5 MB temporary would not fit on every stack.
  // (The buffers are left as they are: start() finds them again.)
  std::destroy_at(&state_);
  std::construct_at(&state_);
}

AllocId Encoder::alloc(const AllocRecord& r) noexcept {
  State& st = s();
  Out& o = st.begin();
  st.switch_to(o, r.thread);
  return st.alloc(o, r);
}

AllocId Encoder::realloc(AllocId old, const AllocRecord& r) noexcept {
  State& st = s();
  if (old.value >= st.next_id) return alloc(r);
  Out& o = st.begin();
  st.switch_to(o, r.thread);
  st.timed(o, Code::ReallocOf, r.time_ns);
  uint8_t*& p = o[Stream::Ref];
  p = put_varint(p, st.history.block_ref(old.value, st.next_id, st.thread));
  st.history.on_free(old.value, st.next_id, r.func, true, st.thread);
  return st.alloc(o, r);
}

void Encoder::free(AllocId id, ThreadId thread, uint64_t time_ns, Func func) noexcept {
  State& st = s();
  if (id.value >= st.next_id) return;  // not an id this encoder gave out
  Out& o = st.begin();
  st.switch_to(o, thread);
  st.timed(o, Code::Free, time_ns);
  const bool changed = func != st.history.predicted_free_func(id.value, st.next_id);
  const uint64_t ref = st.history.block_ref(id.value, st.next_id, st.thread);
  uint8_t*& p = o[Stream::Ref];
  p = put_varint(p, ref << 1 | (changed ? 1 : 0));
  if (changed) *p++ = static_cast<uint8_t>(func);
  st.history.on_free(id.value, st.next_id, func, false, st.thread);
}

void Encoder::flush() noexcept { s().seal(); }
size_t Encoder::open_bytes() const noexcept { return s().open_bytes(); }
uint64_t Encoder::open_since_ns() const noexcept {
  return s().open ? (s().chunk_us << s().unit_shift) * kTimeUnitNs : 0;
}
AllocId Encoder::next_id() const noexcept { return AllocId{s().next_id}; }
uint64_t Encoder::bytes_written() const noexcept { return s().bytes_written; }

}  // namespace memloupe::format
