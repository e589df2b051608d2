// Encoder: the rare events, each an Ext header (docs/FORMAT.md §5.7) and fields.
#include "format/encoder.h"
#include "format/encoder_state.h"

namespace memloupe::format {

void Encoder::thread_start(ThreadId thread, uint64_t time_ns, uint32_t os_tid) noexcept {
  uint8_t*& p = s().ext(ExtType::ThreadStart, time_ns);
  p = put_varint(p, thread.value);
  p = put_varint(p, os_tid);
}

void Encoder::thread_name(ThreadId thread, uint64_t time_ns, std::string_view name) noexcept {
  uint8_t*& p = s().ext(ExtType::ThreadName, time_ns);
  p = put_varint(p, thread.value);
  p = put_string(p, name.data(), name.size(), kMaxString);
}

void Encoder::thread_end(ThreadId thread, uint64_t time_ns) noexcept {
  uint8_t*& p = s().ext(ExtType::ThreadEnd, time_ns);
  p = put_varint(p, thread.value);
}

void Encoder::module_load(const ModuleLoad& m) noexcept {
  uint8_t*& p = s().ext(ExtType::ModuleLoad, m.time_ns);
  p = put_varint(p, m.start);
  p = put_varint(p, m.end >= m.start ? m.end - m.start : 0);
  p = put_varint(p, m.load_bias);
  p = put_string(p, m.path.data(), m.path.size(), kMaxString);
  const size_t n = m.build_id.size() < kMaxBuildId ? m.build_id.size() : kMaxBuildId;
  *p++ = static_cast<uint8_t>(n);
  if (n) std::memcpy(p, m.build_id.data(), n);
  p += n;
}

void Encoder::module_unload(uint64_t time_ns, uint64_t start) noexcept {
  uint8_t*& p = s().ext(ExtType::ModuleUnload, time_ns);
  p = put_varint(p, start);
}

void Encoder::rss(uint64_t time_ns, uint64_t rss_bytes) noexcept {
  uint8_t*& p = s().ext(ExtType::Rss, time_ns);
  p = put_varint(p, rss_bytes);
}

void Encoder::marker(ThreadId thread, uint64_t time_ns, std::string_view name) noexcept {
  uint8_t*& p = s().ext(ExtType::Marker, time_ns);
  p = put_varint(p, thread.value);
  p = put_string(p, name.data(), name.size(), kMaxString);
}

void Encoder::call_totals(const CallTotals& totals) noexcept {
  uint8_t*& p = s().ext(ExtType::CallTotals, totals.time_ns);
  p = put_varint(p, kFuncCount);
  for (const FuncTotal& t : totals.totals) {
    p = put_varint(p, t.calls);
    p = put_varint(p, t.bytes);
  }
}

void Encoder::trace_end(uint64_t time_ns, EndReason reason) noexcept {
  State& st = s();
  uint8_t*& p = st.ext(ExtType::TraceEnd, time_ns);
  *p++ = static_cast<uint8_t>(reason);
  st.seal();
}

void Encoder::rate_change(ThreadId thread, uint64_t time_ns, uint64_t bytes_per_sample) noexcept {
  uint8_t*& p = s().ext(ExtType::RateChange, time_ns);
  p = put_varint(p, thread.value);
  p = put_varint(p, bytes_per_sample);
}

void Encoder::depth_change(ThreadId thread, uint64_t time_ns, uint32_t depth) noexcept {
  uint8_t*& p = s().ext(ExtType::DepthChange, time_ns);
  p = put_varint(p, thread.value);
  p = put_varint(p, depth);
}

}  // namespace memloupe::format
