#include "types/dwarf_types.h"

#include <dwarf.h>

#include <algorithm>
#include <map>

#include "symbolize/inline_frames.h"

namespace memloupe::types {
namespace {

std::optional<Dwarf_Die> ref(Dwarf_Die* die, int name, bool integrate) {
  Dwarf_Attribute attr;
  Dwarf_Die out;
  Dwarf_Attribute* a = integrate ? dwarf_attr_integrate(die, name, &attr) : dwarf_attr(die, name, &attr);
  if (a == nullptr || dwarf_formref_die(a, &out) == nullptr) return std::nullopt;
  return out;
}

// Typedefs and cv-qualifiers name the same type.
std::optional<Dwarf_Die> peel(Dwarf_Die die) {
  for (int hops = 0; hops < 16; ++hops) {
    switch (dwarf_tag(&die)) {
      case DW_TAG_typedef:
      case DW_TAG_const_type:
      case DW_TAG_volatile_type:
      case DW_TAG_restrict_type: {
        auto next = ref(&die, DW_AT_type, false);
        if (!next) return std::nullopt;  // cv void
        die = *next;
        break;
      }
      default:
        return die;
    }
  }
  return std::nullopt;
}

// The DIE itself, then its abstract origin, then the specification of either:
// the places a function's parameters and template parameters may be listed.
std::vector<Dwarf_Die> origins(Dwarf_Die die) {
  std::vector<Dwarf_Die> out{die};
  for (size_t i = 0; i < out.size() && out.size() < 4; ++i) {
    for (int name : {DW_AT_abstract_origin, DW_AT_specification}) {
      if (auto next = ref(&out[i], name, false)) out.push_back(*next);
    }
  }
  return out;
}

}  // namespace

const char* die_name(Dwarf_Die die) {
  Dwarf_Attribute attr;
  const char* name = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_name, &attr));
  return name != nullptr ? name : "";
}

std::vector<std::vector<Dwarf_Die>> function_scopes(symbolize::UnitIndex& units, std::span<const uint64_t> vaddrs,
                                                    std::vector<uint64_t>& biases) {
  std::vector<std::vector<Dwarf_Die>> out(vaddrs.size());
  biases.assign(vaddrs.size(), 0);
  struct Unit {
    Dwarf_Die die;
    std::vector<std::pair<uint64_t, size_t>> pcs;  // DWARF address, index into vaddrs
  };
  std::map<uint64_t, Unit> by_unit;
  for (size_t i = 0; i < vaddrs.size(); ++i) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = units.find(vaddrs[i], bias);
    if (cu == nullptr) continue;
    biases[i] = bias;
    auto& unit = by_unit.try_emplace(dwarf_dieoffset(cu), Unit{*cu, {}}).first->second;
    unit.pcs.emplace_back(vaddrs[i] - bias, i);
  }
  for (auto& [offset, unit] : by_unit) {
    std::ranges::sort(unit.pcs);
    std::vector<uint64_t> pcs;
    for (const auto& p : unit.pcs) pcs.push_back(p.first);
    std::vector<std::vector<Dwarf_Die>> chains = symbolize::function_chains(&unit.die, pcs);
    for (size_t k = 0; k < chains.size(); ++k) {
      std::ranges::reverse(chains[k]);
      out[unit.pcs[k].second] = std::move(chains[k]);
    }
  }
  return out;
}

std::optional<Dwarf_Die> this_class(Dwarf_Die scope) {
  for (Dwarf_Die die : origins(scope)) {
    Dwarf_Die child;
    if (dwarf_child(&die, &child) != 0) continue;
    do {
      if (dwarf_tag(&child) != DW_TAG_formal_parameter) continue;
      Dwarf_Attribute attr;
      bool artificial = false;
      if (dwarf_attr_integrate(&child, DW_AT_artificial, &attr) != nullptr) (void)dwarf_formflag(&attr, &artificial);
      // `this` comes first; a first parameter that is not artificial means a
      // static member or a free function.
      if (!artificial) break;
      auto pointer = ref(&child, DW_AT_type, true);
      if (!pointer) break;
      pointer = peel(*pointer);
      if (!pointer || dwarf_tag(&*pointer) != DW_TAG_pointer_type) break;
      auto cls = ref(&*pointer, DW_AT_type, false);
      return cls ? peel(*cls) : std::nullopt;
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  return std::nullopt;
}

std::optional<Dwarf_Die> template_type(Dwarf_Die die, unsigned index) {
  for (Dwarf_Die d : origins(die)) {
    Dwarf_Die child;
    if (dwarf_child(&d, &child) != 0) continue;
    unsigned seen = 0;
    do {
      if (dwarf_tag(&child) != DW_TAG_template_type_parameter) continue;
      if (seen++ == index) return ref(&child, DW_AT_type, false);
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  return std::nullopt;
}

std::optional<uint64_t> type_size(Dwarf_Die type) {
  auto t = peel(type);
  if (!t) return std::nullopt;
  if (dwarf_hasattr(&*t, DW_AT_declaration)) return std::nullopt;
  const int tag = dwarf_tag(&*t);
  if ((tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type ||
       tag == DW_TAG_ptr_to_member_type) &&
      !dwarf_hasattr(&*t, DW_AT_byte_size)) {
    Dwarf_Die cu;
    uint8_t address_size = 0;
    if (dwarf_diecu(&*t, &cu, &address_size, nullptr) == nullptr || address_size == 0) return std::nullopt;
    return address_size;
  }
  Dwarf_Word size = 0;
  if (dwarf_aggregate_size(&*t, &size) != 0 || size == 0) return std::nullopt;
  return size;
}

bool ranges_meet(Dwarf_Die* die, uint64_t lo, uint64_t hi) {
  Dwarf_Addr base, start, end;
  for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &start, &end)) > 0;) {
    if (start < hi && lo < end) return true;
  }
  return false;
}

std::optional<uint64_t> first_start_in(Dwarf_Die* die, uint64_t lo, uint64_t hi) {
  std::optional<uint64_t> best;
  Dwarf_Addr base, start, end;
  for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &start, &end)) > 0;) {
    if (start >= lo && start < hi && (!best || start < *best)) best = start;
  }
  return best;
}

}  // namespace memloupe::types
