#include "ctf/ctf_backtrace.h"

#include <algorithm>
#include <string>

#include "ctf/ctf_wire.h"

namespace memloupe::reader::ctf {

BacktraceDecoder::BacktraceDecoder() : loc_(kCacheSize, 0), pred_(kCacheSize, 0) {}

void BacktraceDecoder::decode(Cursor& in, uint64_t common_prefix, uint32_t ncodes) {
  if (common_prefix <= frames_.size()) {
    frames_.resize(common_prefix);
    decode_into(in, ncodes, frames_);
  } else {
    scratch_.clear();
    decode_into(in, ncodes, scratch_);
  }
}

void BacktraceDecoder::decode_into(Cursor& in, uint32_t ncodes, std::vector<uint64_t>& out) {
  uint16_t context = 0;  // slot 0 doubles as the start-of-backtrace context
  auto emit = [&](uint64_t code) {
    if (out.size() >= kMaxFrames) {
      in.fail("backtrace longer than " + std::to_string(kMaxFrames) + " frames");
      return false;
    }
    out.push_back(code);
    return true;
  };
  for (uint32_t i = 0; i < ncodes; ++i) {
    uint16_t word = in.u16("backtrace codeword");
    uint16_t slot = word >> 2;  // < kCacheSize by construction
    unsigned tag = word & 3;
    uint32_t predictions = tag == kHit1 ? 1 : 0;
    if (tag == kHitN) predictions = in.u8("backtrace prediction count");
    uint64_t literal = tag == kMiss ? in.u64("backtrace location code") : 0;
    if (in.failed()) return;

    pred_[context] = slot;
    if (tag == kMiss) loc_[slot] = literal;
    if (!emit(loc_[slot])) return;
    context = slot;
    for (uint32_t p = 0; p < predictions; ++p) {
      context = pred_[context];
      if (!emit(loc_[context])) return;
    }
  }
}

bool BacktraceDecoder::verify(uint16_t ix, uint16_t pred, uint64_t value) const {
  if (ix == kNoVerify) return true;
  return ix < kCacheSize && pred_[ix] == pred && loc_[ix] == value;
}

BacktraceEncoder::BacktraceEncoder()
    : loc_(kCacheSize, 0), date_(kCacheSize, 0), next_(kCacheSize, 0) {}

uint64_t BacktraceEncoder::common_prefix(std::span<const uint64_t> innermost_first) const {
  auto mismatch = std::mismatch(innermost_first.rbegin(), innermost_first.rend(), last_.rbegin(),
                                last_.rend());
  return static_cast<uint64_t>(mismatch.first - innermost_first.rbegin());
}

namespace {
// memtrace's two slot hashes (any placement decodes; these spread codes well).
uint16_t hash1(uint64_t code) { return ((code * 0x4983723) >> 11) & (kCacheSize - 1); }
uint16_t hash2(uint64_t code) { return ((code * 0xfdea731) >> 21) & (kCacheSize - 1); }
// The largest codeword: a miss (u16 + u64).
constexpr size_t kMaxCodeword = 10;
}  // namespace

uint32_t BacktraceEncoder::encode(std::span<const uint64_t> innermost_first, uint64_t common,
                                  uint64_t date, Out& out,
                                  const std::function<void(uint64_t)>& on_miss) {
  // Frames outermost first: index i is innermost_first[n - 1 - i].
  const size_t n = innermost_first.size();
  auto frame = [&](size_t i) { return innermost_first[n - 1 - i]; };
  const size_t start = out.size();
  uint32_t ncodes = 0;
  uint16_t context = 0;
  size_t i = std::min<uint64_t>(common, n);
  while (i < n && out.size() - start + kMaxCodeword <= kMaxBacktraceBytes) {
    const uint64_t code = frame(i);
    const uint16_t h1 = hash1(code), h2 = hash2(code);
    const bool hit = loc_[h1] == code || loc_[h2] == code;
    const uint16_t slot = loc_[h1] == code ? h1 : hit ? h2 : (date_[h1] < date_[h2] ? h1 : h2);
    date_[slot] = date;
    next_[context] = slot;
    context = slot;
    ++i;
    ++ncodes;
    if (!hit) {
      loc_[slot] = code;
      out.u16(static_cast<uint16_t>(slot << 2 | kMiss));
      out.u64(code);
      on_miss(code);
      continue;
    }
    // Follow the predictions while they are right (at most 255 per codeword).
    uint32_t correct = 0;
    while (i < n && correct < 255 && loc_[next_[context]] == frame(i)) {
      context = next_[context];
      ++correct;
      ++i;
    }
    if (correct <= 1) {
      out.u16(static_cast<uint16_t>(slot << 2 | (correct == 0 ? kHit0 : kHit1)));
    } else {
      out.u16(static_cast<uint16_t>(slot << 2 | kHitN));
      out.u8(static_cast<uint8_t>(correct));
    }
  }
  // The decoder now holds the shared prefix plus the frames coded: the outermost i.
  last_.assign(innermost_first.end() - static_cast<std::ptrdiff_t>(i), innermost_first.end());
  return ncodes;
}

BacktraceEncoder::Verifier BacktraceEncoder::next_verifier() {
  Verifier v{static_cast<uint16_t>(verify_ix_), next_[verify_ix_], loc_[verify_ix_]};
  verify_ix_ = (verify_ix_ + kVerifyStep) & (kCacheSize - 1);
  return v;
}

}  // namespace memloupe::reader::ctf
