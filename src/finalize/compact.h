// The finaliser's compaction: a raw recorder trace rewritten into its final
// form (merged column chunks, zstd). Its own stage of finalise (finalize.cc
// decides whether a trace needs it); the reader's chunk walker does the walking.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "format/events.h"
#include "format/expected.h"

namespace memloupe::finalize {

struct CompactOptions {
  int zstd_level = 12;  // <= 0: no compression (column form only)
  uint32_t max_events_payload = 4u << 20;  // events chunks are merged up to this raw size
  // Called with every event as the compaction decodes it (the same events, in the
  // same order, that a Reader of the output delivers, SymbolDefs aside), so work
  // over the events can ride on this read instead of another one. The second
  // argument is Reader::fresh_frames() for it.
  std::function<void(const format::Event&, uint32_t fresh_frames)> on_event{};
  // Called once the last event is decoded, before the compression of the last
  // chunks is waited for, with Compacted::damage (not called when the header
  // is unreadable).
  std::function<void(const std::optional<Error>& damage)> on_events_done{};
};
struct Compacted {
  std::vector<uint8_t> bytes;   // a valid trace: prologue, header, merged compressed chunks
  std::optional<Error> damage;  // set if the input was cut short or damaged (the rest is kept)
};
// Rewrites a trace (typically the recorder's raw output) compactly (compact.cc):
// the events are regrouped into column-form chunks of up to max_events_payload
// raw bytes (the encoder's state runs across chunks, so where they are cut does
// not matter), and every chunk is zstd-compressed. Events are moved, never
// re-encoded. Fails only if the prologue or header chunk is unreadable.
Expected<Compacted> compact_trace(std::span<const uint8_t> trace, const CompactOptions& options);

}  // namespace memloupe::finalize
