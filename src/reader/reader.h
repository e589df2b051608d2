// Reader: a pull iterator over the events of a trace file.
//
// It reads memloupe traces and Jane Street memtrace CTF traces (v2, v3), told
// apart by their magic. It trusts nothing in the file: every length, count and
// index is checked, and nothing is allocated in proportion to a number read from
// the file. On damage it stops, and error() names the byte offset and what was
// expected; every event before the damage has been delivered.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/events.h"
#include "format/expected.h"

namespace memloupe::reader {

// Owned symbol information: address -> frames (innermost inlined first).
struct OwnedFrame {
  std::string function;
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
};
using SymbolTable = std::unordered_map<uint64_t, std::vector<OwnedFrame>>;

// Which backtrace an Alloc has, as the reader knows it without looking at the
// frames: two Allocs of one read with the same non-zero `serial` have the same
// backtrace (a memloupe trace's backtrace cache: `serial` numbers the fillings
// of its slots, `slot` is where the backtrace sits, and an Alloc that names a
// slot repeats that slot's backtrace). Equal backtraces may still have
// different keys (a backtrace read again after its slot was refilled). A
// consumer that interns backtraces (the analysis index) keeps one answer per
// slot and hashes the frames only when the slot's serial changed.
//
// `memo`, when given: a word the reader keeps beside the slot, zero whenever
// the slot is filled, for one consumer of the read to keep its answer for this
// backtrace in (the analysis index's stack id, found beside the slot the
// decoder has just read instead of in a table of the index's own: that table's
// load missed the cache on deep-stack traces). Valid until the next event.
// `addon_memo`: a second such word, for the finaliser's addon
// (finalize::FinalizeAddon: the types' site of the innermost frame, whose
// load from the slot's frames missed the cache as the index's table did).
struct BacktraceKey {
  uint64_t serial = 0;  // 0: not known
  uint32_t slot = 0;    // below format::kBtCacheSize
  uint32_t* memo = nullptr;
  uint32_t* addon_memo = nullptr;
};

class Reader {
 public:
  virtual ~Reader() = default;

  // Opens a file; errors: missing/unreadable file, not a trace, newer version.
  // Both are defined in ctf/open_trace.cc, which knows every format's magic.
  static Expected<std::unique_ptr<Reader>> open(const std::string& path);
  // Reads from memory (tests, fuzzing). `name` is used in messages.
  static Expected<std::unique_ptr<Reader>> from_bytes(std::vector<uint8_t> bytes,
                                                      std::string name = "<memory>");

  virtual const format::TraceInfo& info() const = 0;

  // The next event, or nullptr at the end of the readable data. The event and
  // the views inside it stay valid until the next call. After nullptr, error()
  // says whether reading stopped at damage (or truncation) rather than at the end.
  virtual const format::Event* next() = 0;
  virtual const std::optional<Error>& error() const = 0;
  // For the Alloc next() just returned: a count n such that every frame of its
  // backtrace past the first (innermost) n appeared in the backtrace of an Alloc
  // delivered before. A consumer that wants each distinct address once (the
  // finaliser) need only look at those n; with prefix sharing and the backtrace
  // cache that is a few frames per event, not the whole depth. Readers that do
  // not know say the whole backtrace.
  virtual uint32_t fresh_frames() const { return UINT32_MAX; }
  // For the Alloc next() just returned: its backtrace's key (above). Readers
  // that do not know say {} (every backtrace is then looked at).
  virtual BacktraceKey backtrace_key() const { return {}; }
  // Both of the above in one call (the finaliser's read asks for both of
  // every Alloc: one virtual call, not two).
  virtual BacktraceKey alloc_key(uint32_t& fresh) const {
    fresh = fresh_frames();
    return backtrace_key();
  }
  // alloc_key() without a virtual call where the reader keeps both in one
  // place for the read (a native trace's decoder: set_alloc_key_source), the
  // key by reference (valid until the next next()); `scratch` holds it
  // otherwise. (The call and the key's copy were ~18 instructions an Alloc
  // of the finaliser's read.)
  const BacktraceKey& alloc_key_view(uint32_t& fresh, BacktraceKey& scratch) const {
    if (const BacktraceKey* key = alloc_key_in_place(fresh)) [[likely]] return *key;
    scratch = alloc_key(fresh);
    return scratch;
  }
  // The in-place half of alloc_key_view(): the key where the reader keeps it
  // (and `fresh` set), or nullptr (`fresh` untouched) when it keeps none and
  // alloc_key() must be asked. A caller that asks only then builds no
  // scratch key for every Alloc (its four stores were hoisted before the test).
  const BacktraceKey* alloc_key_in_place(uint32_t& fresh) const {
    if (!key_source_) [[unlikely]] return nullptr;
    fresh = *fresh_source_;
    return key_source_;
  }
  // For a file still being written (reader/growing_file.h): after next()
  // returned nullptr without an error at the end of the bytes, lets the next
  // next() look again from there (the bytes may have grown). Readers that
  // cannot follow a growing file do nothing.
  virtual void resume() {}

  // Symbols known so far. For a memloupe trace the symbols section is located and
  // loaded when the file is opened (so backtraces can be named while streaming);
  // for memtrace CTF, locations arrive in the stream and accumulate here.
  virtual const SymbolTable& symbols() const = 0;
  // True when the file is a finalised memloupe trace with a symbols section.
  virtual bool has_symbols_section() const = 0;

  virtual uint64_t file_size() const = 0;
  virtual uint64_t offset() const = 0;        // bytes consumed so far (for progress)
  virtual uint64_t events_read() const = 0;

 protected:
  // Where alloc_key_view() finds the Alloc's fresh frames and key, for the
  // life of the reader.
  void set_alloc_key_source(const uint32_t* fresh, const BacktraceKey* key) {
    fresh_source_ = fresh;
    key_source_ = key;
  }

 private:
  const uint32_t* fresh_source_ = nullptr;
  const BacktraceKey* key_source_ = nullptr;
};

}  // namespace memloupe::reader
