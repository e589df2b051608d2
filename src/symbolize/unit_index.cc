#include "symbolize/unit_index.h"

#include <algorithm>

namespace memloupe::symbolize {

Dwarf_Die* UnitIndex::find(uint64_t pc, Dwarf_Addr& bias) {
  if (Dwarf_Die* cu = dwfl_module_addrdie(module_, pc, &bias)) return cu;
  if (!built_) build();
  auto it = std::ranges::upper_bound(ranges_, pc, {}, &Range::start);
  // Unit ranges do not overlap; the one starting last at or before pc is the candidate.
  if (it == ranges_.begin()) return nullptr;
  --it;
  if (pc >= it->end) return nullptr;
  bias = units_[it->unit].bias;
  return &units_[it->unit].die;
}

void UnitIndex::build() {
  built_ = true;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = nullptr; (cu = dwfl_module_nextcu(module_, cu, &bias)) != nullptr;) {
    const size_t unit = units_.size();
    units_.push_back({*cu, bias});
    Dwarf_Addr base, start, end;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(cu, off, &base, &start, &end)) > 0;) {
      if (start < end) ranges_.push_back({start + bias, end + bias, unit});
    }
  }
  std::ranges::sort(ranges_, {}, &Range::start);
}

}  // namespace memloupe::symbolize
