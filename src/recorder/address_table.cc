#include "recorder/address_table.h"

namespace memloupe::recorder {

bool AddressTable::grow() noexcept {
  const unsigned bits = slots_ ? 64 - shift_ + 1 : kInitialBits;
  Mapping bigger = Mapping::anonymous(sizeof(Entry) << bits);
  if (!bigger) return false;
  Entry* const old = slots_;
  const size_t old_slots = slots_ ? mask_ + 1 : 0;
  slots_ = static_cast<Entry*>(bigger.data());
  mask_ = (size_t{1} << bits) - 1;
  shift_ = 64 - bits;
  grow_at_ = (mask_ + 1) / (mask_ + 1 <= kQuarterLoadSlots ? 4 : 2);
  for (size_t i = 0; i < old_slots; ++i) {
    if (old[i].key == 0) continue;
    size_t j = home(old[i].key);
    while (slots_[j].key != 0) j = (j + 1) & mask_;
    slots_[j] = old[i];
  }
  map_ = static_cast<Mapping&&>(bigger);  // unmaps the old slots
  return true;
}

void AddressTable::shift_back(size_t i) noexcept {
  // Backward shift: pull later members of the probe run into the hole when the
  // hole lies between their home slot and their current slot (cyclically).
  size_t hole = i;
  for (size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
    const size_t h = home(slots_[j].key);
    const bool movable = ((j - h) & mask_) >= ((j - hole) & mask_);
    if (movable) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = {0, 0};
  --count_;
}

void AddressTable::clear() noexcept {
  map_.reset();
  slots_ = nullptr;
  mask_ = 0;
  shift_ = 64;
  count_ = 0;
  grow_at_ = 0;
}

}  // namespace memloupe::recorder
