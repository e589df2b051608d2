// What every export and the HTML report draw from: the allocation sites of a
// trace (one per distinct backtrace) with their values, the heap over time, and
// each site's activity over a fixed number of time buckets.
//
// It is filled from the analysis model (profile_from_model.h) and is deliberately
// plain data, so each writer can be tested on a hand-built Profile whose right
// answers are known.
//
// Invariants (the writers rely on them):
//  - Every value is an estimate already scaled for sampling (exact in --all mode)
//    and is >= 0.
//  - Site::stack holds indices into Profile::locations, innermost (leaf) first.
//  - Site::buckets is sparse: sorted by `index`, each index < bucket_count.
//    Bucket i covers [i*bucket_ns, (i+1)*bucket_ns); the last one ends at duration_ns.
//  - For each site, the sum over buckets of `allocated` equals values.allocated
//    (when the selection is the whole trace) and the sum of `leaked` equals
//    values.leaked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/events.h"

namespace memloupe::report {

using LocationId = format::StrongId<struct LocationTag, uint32_t>;
using MappingId = format::StrongId<struct MappingTag, uint32_t>;

struct SourceFrame {
  std::string function;  // demangled; empty if unknown
  std::string file;      // empty if unknown
  uint32_t line = 0;
  uint32_t column = 0;
};

// One loaded module (a pprof Mapping, a massif "in lib.so" fallback name).
struct Mapping {
  uint64_t start = 0;  // lowest mapped address
  uint64_t end = 0;    // one past the highest
  uint64_t file_offset = 0;
  std::string path;
  std::string build_id;  // lower-case hex; empty if unknown
};

// One return address of a backtrace and what it symbolises to.
struct Location {
  uint64_t address = 0;
  std::optional<MappingId> mapping;
  std::vector<SourceFrame> frames;  // innermost inlined frame first; empty if unknown
  // False when `frames` only names the address (no symbols): pprof then gets no
  // Line for it and may symbolise the address itself from the mapping's file.
  bool symbolized = true;
};

// Bytes and objects (block count) of one measure. From a sampled trace, also
// what the 95% intervals are computed from (analysis::Count; the sample count
// is bytes / bytes_per_sample): the sampled blocks seen and the objects
// estimate's variance. Both 0 from an exact trace.
struct Amount {
  double bytes = 0;
  double objects = 0;
  double blocks_seen = 0;
  double objects_var = 0;
  Amount& operator+=(const Amount& o) {
    bytes += o.bytes;
    objects += o.objects;
    blocks_seen += o.blocks_seen;
    objects_var += o.objects_var;
    return *this;
  }
};

struct SiteValues {
  Amount allocated;  // allocated within the selection
  Amount live;       // live at the selection's end (the "in use" of pprof)
  Amount peak;       // live at the moment the whole heap peaked
  Amount leaked;     // still live at the end of the trace
};

// What one site did during one time bucket.
struct Bucket {
  uint32_t index = 0;
  Amount allocated;  // blocks allocated in this bucket
  Amount freed;      // blocks (of this site) freed in this bucket
  Amount leaked;     // blocks allocated in this bucket and never freed
};

struct Site {
  std::vector<LocationId> stack;  // innermost first
  SiteValues values;
  std::vector<Bucket> buckets;    // sparse, sorted by index
  // The C++ type the site creates (docs/TYPES.md); empty if unknown. For a
  // buffer of T (T[]), element_size is sizeof(T): objects of the type = bytes
  // / element_size; 0: one object per block.
  std::string type;
  uint64_t element_size = 0;
};

struct HeapPoint {
  uint64_t time_ns = 0;
  double bytes = 0;
};

struct TimeMark {
  uint64_t time_ns = 0;
  std::string name;
};

struct Profile {
  format::TraceInfo info;
  uint64_t duration_ns = 0;
  uint64_t events = 0;

  std::vector<Mapping> mappings;
  std::vector<Location> locations;
  std::vector<Site> sites;

  uint32_t bucket_count = 0;
  uint64_t bucket_ns = 1;

  std::vector<HeapPoint> heap;  // estimated live heap, each change (or a bounded sample of them)
  std::vector<HeapPoint> rss;   // resident set size samples
  // Mapped memory (anonymous mmap, the program break), apart from the heap
  // (analysis::MappedMemory); empty when the trace has none.
  std::vector<HeapPoint> mapped;
  HeapPoint peak;               // the heap's highest point
  Amount peak_live;             // the blocks live then (bytes == peak.bytes)
  std::vector<TimeMark> markers;

  // The time selection the site values were computed for; [0, duration_ns] by default.
  uint64_t selection_begin_ns = 0;
  uint64_t selection_end_ns = 0;

  const Location& location(LocationId id) const { return locations[id.value]; }
};

}  // namespace memloupe::report
