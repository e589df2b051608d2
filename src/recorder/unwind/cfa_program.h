// The DWARF call-frame instruction interpreter, restricted to what the fast unwinder
// can use: the CFA rule and the rules for RBP and the return address.
#pragma once

#include <cstdint>

#include "recorder/unwind/dwarf_cursor.h"
#include "recorder/unwind/rule.h"

namespace memloupe::recorder::unwind_detail {

// DWARF register numbers on x86-64 (System V psABI, figure 3.36).
inline constexpr uint64_t kDwarfRbp = 6;
inline constexpr uint64_t kDwarfRsp = 7;
inline constexpr uint64_t kDwarfRip = 16;

struct RegRule {
  enum class How : uint8_t {
    kUndefined,   // the caller's value is not recoverable
    kSameValue,   // the callee did not change it
    kAtCfa,       // saved in memory at CFA + offset
    kOther,       // in another register, or a DWARF expression: not representable
  };
  How how = How::kSameValue;
  int64_t offset = 0;

  friend bool operator==(const RegRule&, const RegRule&) = default;
};

// One row of the CFI table: the rules that hold at one code address.
struct CfaRow {
  uint64_t cfa_reg = ~uint64_t{0};
  int64_t cfa_offset = 0;
  bool cfa_is_expression = false;
  RegRule rbp;
  RegRule ra{RegRule::How::kUndefined, 0};
};

// What a CIE contributes to running an FDE's program.
struct CfaParams {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_reg = kDwarfRip;
  uint8_t fde_encoding = 0;  // for DW_CFA_set_loc
};

// Runs the CIE's initial instructions, then the FDE's instructions from `pc_begin`,
// stopping at the row that covers `target`. Returns false on an instruction it does
// not know or on bytes that run past their bounds (the rule is then unusable).
bool run_cfa_program(const CfaParams& params, DwarfCursor cie_instructions,
                     DwarfCursor fde_instructions, uint64_t pc_begin, uint64_t target,
                     CfaRow& row) noexcept;

// Reduces a row to the compact rule the fast unwinder stores (kFallback when the row
// does not fit the shapes rule.h describes).
Rule reduce_row(const CfaRow& row) noexcept;

}  // namespace memloupe::recorder::unwind_detail
