// memtrace's backtrace codec: common prefix + a 2^14-slot frame cache with
// per-slot prediction of the next frame.
//
// A backtrace is coded outermost frame first. An alloc event says how many
// leading (outermost) frames it shares with the previous backtrace, then gives
// codewords for the rest; each codeword is a u16 `(slot << 2) | tag`:
//
//   tag 0  hit: emit cache[slot]                         (then 0 predictions)
//   tag 1  hit, then 1 predicted frame
//   tag 2  hit, then a u8 n and n predicted frames
//   tag 3  miss: a u64 code follows; cache[slot] = code; emit it
//
// Both sides keep, per slot, the slot that followed it last time (`pred`). For
// each codeword, pred[context] = slot, where context is the slot of the frame
// emitted just before (slot 0 at the start of each backtrace). A predicted frame
// is cache[pred[context]], and it becomes the context. The decoder never hashes,
// so the encoder may place codes anywhere; ours uses memtrace's 2-way
// skewed-associative placement with least-recently-used eviction.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ctf/ctf_cursor.h"
#include "ctf/ctf_out.h"
#include "ctf/ctf_wire.h"

namespace memloupe::reader::ctf {

class BacktraceDecoder {
 public:
  // Guards memory against hostile input: far beyond what memtrace writes (4 KiB
  // of codewords expand to at most ~350,000 frames).
  static constexpr size_t kMaxFrames = size_t{1} << 20;

  BacktraceDecoder();

  // Decodes one backtrace of `ncodes` codewords from `in`. On failure the cursor
  // holds the error. As in memtrace, a `common_prefix` longer than the previous
  // backtrace (possible after the writer truncated one) decodes the codewords for
  // their effect on the cache and leaves the previous backtrace as the result.
  void decode(Cursor& in, uint64_t common_prefix, uint32_t ncodes);

  // The last decoded backtrace, outermost (caller) first.
  std::span<const uint64_t> frames() const { return frames_; }

  // The packet-header cache check: slot `ix` holds `value` and predicts `pred`.
  bool verify(uint16_t ix, uint16_t pred, uint64_t value) const;

 private:
  void decode_into(Cursor& in, uint32_t ncodes, std::vector<uint64_t>& out);

  std::vector<uint64_t> loc_;
  std::vector<uint16_t> pred_;
  std::vector<uint64_t> frames_;
  std::vector<uint64_t> scratch_;
};

class BacktraceEncoder {
 public:
  BacktraceEncoder();

  // How many outermost frames of `innermost_first` the previous backtrace shares.
  uint64_t common_prefix(std::span<const uint64_t> innermost_first) const;

  // Appends codewords for the frames of `innermost_first` beyond `common`,
  // outermost first, and returns the number of codewords. Codewords stop before
  // exceeding kMaxBacktraceBytes (the innermost frames are dropped, as memtrace
  // does); the previous backtrace becomes what the decoder will hold. `on_miss`
  // is called for each code written as a literal. `date` orders cache entries
  // for eviction (the allocation's number).
  uint32_t encode(std::span<const uint64_t> innermost_first, uint64_t common, uint64_t date,
                  Out& out, const std::function<void(uint64_t)>& on_miss);

  struct Verifier {
    uint16_t ix = kNoVerify;
    uint16_t pred = 0;
    uint64_t value = 0;
  };
  // The check for the next events packet (a different slot each time).
  Verifier next_verifier();

 private:
  std::vector<uint64_t> loc_;
  std::vector<uint64_t> date_;
  std::vector<uint16_t> next_;
  std::vector<uint64_t> last_;  // what the decoder holds, innermost first
  uint32_t verify_ix_ = kFirstVerifySlot;
};

}  // namespace memloupe::reader::ctf
