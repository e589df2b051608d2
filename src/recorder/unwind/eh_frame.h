// Reading a module's .eh_frame_hdr and .eh_frame in memory: the slow path that turns
// a code address into a Rule on a cache miss. No allocation, no locks besides the
// loader's (module lookup); every byte read is bounds-checked against the segment.
#pragma once

#include <cstdint>
#include <optional>

#include "recorder/unwind/cfa_program.h"
#include "recorder/unwind/module_lookup.h"
#include "recorder/unwind/rule.h"

namespace memloupe::recorder::unwind_detail {

// An FDE with the parts of its CIE that running its program needs.
struct FrameEntry {
  uint64_t pc_begin = 0, pc_end = 0;
  CfaParams params;
  bool signal_frame = false;  // the CIE's 'S' augmentation
  DwarfCursor cie_instructions{0, 1, 0};
  DwarfCursor fde_instructions{0, 1, 0};
};

struct FdeSearch {
  bool table_usable = false;  // false: unsupported or corrupt .eh_frame_hdr
  uintptr_t fde = 0;          // 0: pc is before the first FDE
};

// Binary-searches .eh_frame_hdr's table for the FDE whose start is the greatest one
// <= pc. Only the table encoding every modern linker emits (datarel|sdata4) is
// supported.
FdeSearch search_fde(uintptr_t eh_frame_hdr, Span tables, uintptr_t pc) noexcept;

// Parses the FDE at `fde` and its CIE.
std::optional<FrameEntry> parse_fde(uintptr_t fde, Span tables) noexcept;

// The slow path: the rule for code address `pc` (already adjusted: a return address
// minus one, or an exact interrupted address).
Rule compute_rule(uintptr_t pc) noexcept;

}  // namespace memloupe::recorder::unwind_detail
