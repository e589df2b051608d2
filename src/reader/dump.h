// The text dump of a trace: a header line, then one line per event, stable and
// documented in docs/DUMP.md (golden tests diff it, people grep it).
//
//   # trace format="memtrace-ctf v2" version=2 pid=40409 mode=sampled ...
//   symbol addr=0x40cb64 frames=[inner (a.ml:96:2) | outer (a.ml:86:4)]
//   alloc id=12 t=1.234567ms thread=0 func=malloc size=48 n=1 bt=[0x401234 main (a.c:10:5) ; 0x401300]
//   free id=12 t=2.000000ms thread=0 func=free
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "format/events.h"
#include "reader/reader.h"

namespace memloupe::reader {

// The first word of an event's dump line, by Event alternative.
inline constexpr size_t kEventKinds = std::variant_size_v<format::Event>;
extern const std::array<std::string_view, kEventKinds> kEventKindNames;
inline std::string_view event_kind_name(const format::Event& e) { return kEventKindNames[e.index()]; }

// Appends the header line (starting with "# trace ") for `info`.
void dump_header(const format::TraceInfo& info, std::string& out);

// Appends `event` as one line without the newline. Backtrace addresses found in
// `symbols` are followed by their frames, innermost inlined first.
void dump_event(const format::Event& event, const SymbolTable& symbols, std::string& out);

// Writes the header and every readable event of `reader`, a line each. Returns
// the number of events; reader.error() says whether reading stopped at damage.
uint64_t dump_trace(Reader& reader, std::ostream& out);

// Counts for `memloupe info`: events by kind and backtrace frames.
struct EventCounts {
  std::array<uint64_t, kEventKinds> by_kind{};
  uint64_t backtrace_frames = 0;  // summed over Alloc events
  uint64_t first_time_ns = 0;
  uint64_t last_time_ns = 0;
  uint64_t events = 0;
  bool timed = false;  // some event carried a time

  void add(const format::Event& event);
  uint64_t allocs() const { return by_kind[variant_index<format::Alloc>()]; }
  // Mean frames per allocation backtrace, rounded to 0.1 (0 without allocations).
  std::string mean_backtrace_length() const;

  template <class T>
  static constexpr size_t variant_index() {
    return index_of(static_cast<format::Event*>(nullptr), static_cast<T*>(nullptr));
  }

 private:
  template <class T, class... Ts>
  static constexpr size_t index_of(std::variant<Ts...>*, T*) {
    size_t i = 0;
    (void)((std::is_same_v<T, Ts> ? true : (++i, false)) || ...);
    return i;
  }
};

// "1.234567ms": nanoseconds as milliseconds with all six decimals.
std::string format_time(uint64_t ns);

}  // namespace memloupe::reader
