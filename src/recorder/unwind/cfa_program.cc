#include "recorder/unwind/cfa_program.h"

namespace memloupe::recorder::unwind_detail {
namespace {

// DW_CFA_* opcodes (DWARF 5, section 6.4.2, plus the GNU extensions GCC emits).
enum : uint8_t {
  kNop = 0x00, kSetLoc = 0x01, kAdvanceLoc1 = 0x02, kAdvanceLoc2 = 0x03,
  kAdvanceLoc4 = 0x04, kOffsetExtended = 0x05, kRestoreExtended = 0x06,
  kUndefined = 0x07, kSameValue = 0x08, kRegister = 0x09, kRememberState = 0x0a,
  kRestoreState = 0x0b, kDefCfa = 0x0c, kDefCfaRegister = 0x0d, kDefCfaOffset = 0x0e,
  kDefCfaExpression = 0x0f, kExpression = 0x10, kOffsetExtendedSf = 0x11,
  kDefCfaSf = 0x12, kDefCfaOffsetSf = 0x13, kValOffset = 0x14, kValOffsetSf = 0x15,
  kValExpression = 0x16, kGnuArgsSize = 0x2e, kGnuNegativeOffsetExtended = 0x2f,
  // High two bits carry the opcode, the low six an operand.
  kAdvanceLoc = 0x40, kOffset = 0x80, kRestore = 0xc0,
};

// GCC nests remember/restore_state at most a couple deep; deeper is treated as bad.
constexpr int kMaxRemembered = 8;

class Interpreter {
 public:
  Interpreter(const CfaParams& params, CfaRow& row) : p_(params), row_(row) {}

  // Runs `in` until its end or until the location passes `target`.
  bool run(DwarfCursor in, uint64_t target) {
    while (!in.at_end()) {
      const uint8_t op = in.u8();
      const uint8_t low = op & 0x3f;
      uint64_t advance = 0;
      switch (op & 0xc0) {
        case kAdvanceLoc: advance = low; break;
        case kOffset: set(low, at_cfa(static_cast<int64_t>(in.uleb()) * p_.data_align)); break;
        case kRestore: restore(low); break;
        default:
          if (!extended(op, in, advance)) return false;
      }
      if (!in.ok()) return false;
      if (advance != 0 || op == kSetLoc) {
        const uint64_t next = op == kSetLoc ? advance : loc_ + advance * p_.code_align;
        if (next > target) return true;  // the current row covers target
        loc_ = next;
      }
    }
    return in.ok();
  }

  void start_fde(uint64_t pc_begin) {
    initial_ = row_;
    loc_ = pc_begin;
  }

 private:
  static RegRule at_cfa(int64_t offset) { return {RegRule::How::kAtCfa, offset}; }
  static RegRule how(RegRule::How h) { return {h, 0}; }

  void set(uint64_t reg, RegRule rule) {
    if (reg == kDwarfRbp) row_.rbp = rule;
    if (reg == p_.ra_reg) row_.ra = rule;
  }

  void restore(uint64_t reg) {
    if (reg == kDwarfRbp) row_.rbp = initial_.rbp;
    if (reg == p_.ra_reg) row_.ra = initial_.ra;
  }

  // Handles every opcode without an operand in its low bits. For set_loc and the
  // advance_loc forms, stores the new location (set_loc) or delta in `advance`.
  bool extended(uint8_t op, DwarfCursor& in, uint64_t& advance) {
    switch (op) {
      case kNop: return true;
      case kSetLoc: advance = in.encoded(p_.fde_encoding); return true;
      case kAdvanceLoc1: advance = in.u8(); return true;
      case kAdvanceLoc2: advance = in.fixed<uint16_t>(); return true;
      case kAdvanceLoc4: advance = in.fixed<uint32_t>(); return true;
      case kOffsetExtended: {
        const uint64_t reg = in.uleb();
        set(reg, at_cfa(static_cast<int64_t>(in.uleb()) * p_.data_align));
        return true;
      }
      case kOffsetExtendedSf: {
        const uint64_t reg = in.uleb();
        set(reg, at_cfa(in.sleb() * p_.data_align));
        return true;
      }
      case kGnuNegativeOffsetExtended: {
        const uint64_t reg = in.uleb();
        set(reg, at_cfa(-static_cast<int64_t>(in.uleb()) * p_.data_align));
        return true;
      }
      case kRestoreExtended: restore(in.uleb()); return true;
      case kUndefined: set(in.uleb(), how(RegRule::How::kUndefined)); return true;
      case kSameValue: set(in.uleb(), how(RegRule::How::kSameValue)); return true;
      case kRegister: {
        const uint64_t reg = in.uleb();
        in.uleb();
        set(reg, how(RegRule::How::kOther));
        return true;
      }
      case kValOffset:
      case kValOffsetSf: {
        const uint64_t reg = in.uleb();
        if (op == kValOffset) in.uleb(); else in.sleb();
        set(reg, how(RegRule::How::kOther));
        return true;
      }
      case kExpression:
      case kValExpression: {
        const uint64_t reg = in.uleb();
        in.skip(in.uleb());
        set(reg, how(RegRule::How::kOther));
        return true;
      }
      case kRememberState:
        if (depth_ == kMaxRemembered) return false;
        stack_[depth_++] = row_;
        return true;
      case kRestoreState:
        if (depth_ == 0) return false;
        row_ = stack_[--depth_];
        return true;
      case kDefCfa:
        row_.cfa_reg = in.uleb();
        row_.cfa_offset = static_cast<int64_t>(in.uleb());
        row_.cfa_is_expression = false;
        return true;
      case kDefCfaSf:
        row_.cfa_reg = in.uleb();
        row_.cfa_offset = in.sleb() * p_.data_align;
        row_.cfa_is_expression = false;
        return true;
      case kDefCfaRegister:
        // Only meaningful on a register+offset CFA; on an expression it is malformed.
        row_.cfa_reg = in.uleb();
        return !row_.cfa_is_expression;
      case kDefCfaOffset:
        row_.cfa_offset = static_cast<int64_t>(in.uleb());
        return !row_.cfa_is_expression;
      case kDefCfaOffsetSf:
        row_.cfa_offset = in.sleb() * p_.data_align;
        return !row_.cfa_is_expression;
      case kDefCfaExpression:
        in.skip(in.uleb());
        row_.cfa_is_expression = true;
        return true;
      case kGnuArgsSize: in.uleb(); return true;
      default: return false;
    }
  }

  const CfaParams& p_;
  CfaRow& row_;
  CfaRow initial_;
  uint64_t loc_ = 0;
  CfaRow stack_[kMaxRemembered];
  int depth_ = 0;
};

}  // namespace

bool run_cfa_program(const CfaParams& params, DwarfCursor cie_instructions,
                     DwarfCursor fde_instructions, uint64_t pc_begin, uint64_t target,
                     CfaRow& row) noexcept {
  row = CfaRow{};
  Interpreter interp(params, row);
  // The CIE's instructions describe the state at the function's first instruction;
  // they never advance the location in practice, and if they did, the target (which
  // lies inside the FDE's range) is after them anyway.
  interp.start_fde(pc_begin);
  if (!interp.run(cie_instructions, ~uint64_t{0})) return false;
  interp.start_fde(pc_begin);  // DW_CFA_restore returns to the state after the CIE
  return interp.run(fde_instructions, target);
}

Rule reduce_row(const CfaRow& row) noexcept {
  const Rule fallback = kind_rule(RuleKind::kFallback);
  if (row.ra.how == RegRule::How::kUndefined) return kind_rule(RuleKind::kOutermost);
  if (row.ra.how != RegRule::How::kAtCfa || row.ra.offset != -8) return fallback;
  if (row.cfa_is_expression) return fallback;
  if (row.cfa_reg != kDwarfRsp && row.cfa_reg != kDwarfRbp) return fallback;
  if (row.cfa_offset < 8 || row.cfa_offset % 8 != 0 ||
      row.cfa_offset >= static_cast<int64_t>(Rule::kMaxCfaOffset)) {
    return fallback;
  }
  uint8_t rbp_slot = 0;
  switch (row.rbp.how) {
    case RegRule::How::kUndefined:  // nothing depends on it; keep the value
    case RegRule::How::kSameValue: break;
    case RegRule::How::kAtCfa:
      if (row.rbp.offset >= 0 || row.rbp.offset % 8 != 0 || row.rbp.offset < -8 * 255) {
        return fallback;
      }
      rbp_slot = static_cast<uint8_t>(-row.rbp.offset / 8);
      break;
    case RegRule::How::kOther: return fallback;
  }
  const CfaBase base = row.cfa_reg == kDwarfRsp ? CfaBase::kRsp : CfaBase::kRbp;
  return frame_rule(base, static_cast<uint32_t>(row.cfa_offset), rbp_slot);
}

}  // namespace memloupe::recorder::unwind_detail
