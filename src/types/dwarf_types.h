// The few DWARF facts the type rules read, from libdw DIEs: the class a member
// function belongs to (through its `this` parameter), template arguments and
// sizeof. Each answers nothing (nullopt) rather than guess.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "symbolize/unit_index.h"

namespace memloupe::types {

// For each of `vaddrs` (Dwfl addresses of the indexed module), the function
// scopes (DW_TAG_subprogram, DW_TAG_inlined_subroutine) holding it, innermost
// first, lexical blocks left out, with `biases[i]` set (Dwfl address = DWARF
// address + bias, for the DIEs' ranges). One walk per unit for all its addresses.
std::vector<std::vector<Dwarf_Die>> function_scopes(symbolize::UnitIndex& units, std::span<const uint64_t> vaddrs,
                                                    std::vector<uint64_t>& biases);

// The DIE's DW_AT_name, through its abstract origin and specification; "" if none.
const char* die_name(Dwarf_Die die);

// The class of a member function's scope: the pointee of its artificial first
// parameter (`this`), looked up through the abstract origin and specification.
std::optional<Dwarf_Die> this_class(Dwarf_Die scope);

// The index-th DW_TAG_template_type_parameter of a class or function DIE (for a
// function scope, of its abstract origin or specification).
std::optional<Dwarf_Die> template_type(Dwarf_Die die, unsigned index);

// sizeof the type: typedefs and cv-qualifiers peeled; nullopt for a declaration
// without a definition, or a type without a known size.
std::optional<uint64_t> type_size(Dwarf_Die type);

// True when [lo, hi) meets one of the DIE's address ranges.
bool ranges_meet(Dwarf_Die* die, uint64_t lo, uint64_t hi);
// The lowest start of the DIE's ranges that is >= lo, if any is below hi.
std::optional<uint64_t> first_start_in(Dwarf_Die* die, uint64_t lo, uint64_t hi);

}  // namespace memloupe::types
