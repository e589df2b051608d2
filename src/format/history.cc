#include "format/history.h"

namespace memloupe::format {

static_assert(kRecentAllocs % 64 == 0);

AllocHistory::AllocHistory() noexcept : recent_{}, live_{}, stacks_{} {
  for (Func& f : free_for_) f = Func::Free;
}

void AllocHistory::on_alloc(uint64_t id, uint64_t size, uint64_t address, Func func) noexcept {
  const unsigned cls = size_class(size);
  recent_[id % kRecentAllocs] = {address, func, static_cast<uint16_t>(cls)};
  live_[(id % kRecentAllocs) / 64] |= uint64_t{1} << (id % 64);
  if (address == 0) return;
  Stack& s = stacks_[cls];
  if (s.depth && s.addr[s.depth - 1] == address) --s.depth;
  prev_addr_ = address;
}

// Counts live bits of ids in (id, next_id), newest first, a 64-id word at a time.
uint64_t AllocHistory::live_rank(uint64_t id, uint64_t next_id) const noexcept {
  if (!known(id, next_id) || !live(id)) return kNoRank;
  uint64_t rank = 0;
  uint64_t hi = next_id;  // exclusive
  while (hi > id + 1) {
    const uint64_t word_lo = (hi - 1) & ~uint64_t{63};
    const uint64_t lo = word_lo > id + 1 ? word_lo : id + 1;  // inclusive
    uint64_t bits = live_[(lo % kRecentAllocs) / 64] >> (lo % 64);
    const uint64_t n = hi - lo;  // 1..64
    if (n < 64) bits &= (uint64_t{1} << n) - 1;
    rank += static_cast<uint64_t>(__builtin_popcountll(bits));
    hi = lo;
  }
  return rank;
}

uint64_t AllocHistory::id_of_rank(uint64_t rank, uint64_t next_id) const noexcept {
  const uint64_t floor = next_id > kRecentAllocs ? next_id - kRecentAllocs : 0;
  uint64_t hi = next_id;
  while (hi > floor) {
    const uint64_t word_lo = (hi - 1) & ~uint64_t{63};
    const uint64_t lo = word_lo > floor ? word_lo : floor;
    uint64_t bits = live_[(lo % kRecentAllocs) / 64] >> (lo % 64);
    const uint64_t n = hi - lo;
    if (n < 64) bits &= (uint64_t{1} << n) - 1;
    const uint64_t count = static_cast<uint64_t>(__builtin_popcountll(bits));
    if (rank < count) {
      // The (rank+1)-th set bit from the top of `bits`.
      for (uint64_t b = n; b-- > 0;)
        if ((bits >> b) & 1 && rank-- == 0) return lo + b;
    }
    rank -= count;
    hi = lo;
  }
  return kNoRank;
}

Func AllocHistory::predicted_free_func(uint64_t id, uint64_t next_id) const noexcept {
  if (!known(id, next_id)) return last_free_;
  return free_for_[static_cast<unsigned>(recent_[id % kRecentAllocs].func)];
}

void AllocHistory::on_free(uint64_t id, uint64_t next_id, Func func, bool realloc) noexcept {
  if (!realloc) last_free_ = func;
  if (!known(id, next_id)) return;
  live_[(id % kRecentAllocs) / 64] &= ~(uint64_t{1} << (id % 64));
  const Recent& r = recent_[id % kRecentAllocs];
  if (!realloc) free_for_[static_cast<unsigned>(r.func)] = func;
  if (r.address == 0) return;
  Stack& s = stacks_[r.cls];
  if (s.depth == kStackDepth) {
    for (unsigned i = 1; i < kStackDepth; ++i) s.addr[i - 1] = s.addr[i];
    --s.depth;
  }
  s.addr[s.depth++] = r.address;
}

}  // namespace memloupe::format
