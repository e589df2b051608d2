#include "format/history.h"

namespace memloupe::format {

AllocHistory::AllocHistory() noexcept : recent_{}, stacks_{} {
  for (Func& f : free_for_) f = Func::Free;
}

void AllocHistory::on_alloc(uint64_t id, uint64_t size, uint64_t address, Func func) noexcept {
  unsigned cls = size_class(size);
  recent_[id % kRecentAllocs] = {address, func, static_cast<uint8_t>(cls)};
  if (address == 0) return;
  Stack& s = stacks_[cls];
  if (s.depth && s.addr[s.depth - 1] == address) --s.depth;
  prev_addr_ = address;
}

Func AllocHistory::predicted_free_func(uint64_t id, uint64_t next_id) const noexcept {
  if (!known(id, next_id)) return last_free_;
  return free_for_[static_cast<unsigned>(recent_[id % kRecentAllocs].func)];
}

void AllocHistory::on_free(uint64_t id, uint64_t next_id, Func func, bool realloc) noexcept {
  if (!realloc) last_free_ = func;
  if (!known(id, next_id)) return;
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
