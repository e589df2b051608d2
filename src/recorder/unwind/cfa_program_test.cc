// The CFI interpreter on hand-assembled programs (opcodes from DWARF 5, 6.4.2).
#include "recorder/unwind/cfa_program.h"

#include <gtest/gtest.h>

#include <vector>

namespace memloupe::recorder::unwind_detail {
namespace {

using Bytes = std::vector<uint8_t>;

DwarfCursor over(const Bytes& b) {
  const auto p = reinterpret_cast<uintptr_t>(b.data());
  return DwarfCursor(p, p, p + b.size());
}

// What GCC's x86-64 CIE says: CFA = RSP + 8, return address at CFA - 8.
const Bytes kCie = {0x0c, 0x07, 0x08,  // DW_CFA_def_cfa r7 8
                    0x90, 0x01,        // DW_CFA_offset r16, 1 * data_align
                    0x00, 0x00};       // padding

constexpr uint64_t kBegin = 0x1000;

Rule rule_at(const Bytes& fde, uint64_t offset, const Bytes& cie = kCie) {
  CfaRow row;
  if (!run_cfa_program(CfaParams{}, over(cie), over(fde), kBegin, kBegin + offset, row)) {
    return kind_rule(RuleKind::kEmpty);  // "the program was rejected"
  }
  return reduce_row(row);
}

// push %rbp; mov %rsp,%rbp; ...80 bytes...; leave; ret
const Bytes kFramePointerFunction = {
    0x41,              // advance 1          (after push %rbp)
    0x0e, 0x10,        // def_cfa_offset 16
    0x86, 0x02,        // offset r6 at 2 * -8
    0x43,              // advance 3          (after mov %rsp,%rbp)
    0x0d, 0x06,        // def_cfa_register r6
    0x02, 0x50,        // advance_loc1 80    (after leave)
    0x0c, 0x07, 0x08,  // def_cfa r7 8
};

TEST(CfaProgram, FramePointerFunctionRowByRow) {
  const Bytes& f = kFramePointerFunction;
  EXPECT_EQ(rule_at(f, 0), frame_rule(CfaBase::kRsp, 8, 0));
  EXPECT_EQ(rule_at(f, 1), frame_rule(CfaBase::kRsp, 16, 2));
  EXPECT_EQ(rule_at(f, 3), frame_rule(CfaBase::kRsp, 16, 2));
  EXPECT_EQ(rule_at(f, 4), frame_rule(CfaBase::kRbp, 16, 2));
  EXPECT_EQ(rule_at(f, 83), frame_rule(CfaBase::kRbp, 16, 2));
  EXPECT_EQ(rule_at(f, 84), frame_rule(CfaBase::kRsp, 8, 2));
}

TEST(CfaProgram, RememberAndRestoreState) {
  const Bytes f = {
      0x41, 0x0e, 0x10,  // +1: CFA = RSP + 16
      0x0a,              // remember_state
      0x41, 0x0e, 0x20,  // +2: CFA = RSP + 32
      0x41, 0x0b,        // +3: restore_state -> RSP + 16
  };
  EXPECT_EQ(rule_at(f, 1), frame_rule(CfaBase::kRsp, 16, 0));
  EXPECT_EQ(rule_at(f, 2), frame_rule(CfaBase::kRsp, 32, 0));
  EXPECT_EQ(rule_at(f, 3), frame_rule(CfaBase::kRsp, 16, 0));
  EXPECT_EQ(rule_at({0x0b}, 0), kind_rule(RuleKind::kEmpty));  // nothing remembered
}

TEST(CfaProgram, RestoreReturnsToTheCieRule) {
  const Bytes f = {0x41, 0x86, 0x02,  // +1: RBP at CFA - 16
                   0x41, 0xc6};       // +2: DW_CFA_restore r6 -> same value
  EXPECT_EQ(rule_at(f, 1).rbp_slot, 2);
  EXPECT_EQ(rule_at(f, 2).rbp_slot, 0);
}

TEST(CfaProgram, WideAdvancesAndFactoredForms) {
  const Bytes f = {
      0x03, 0x00, 0x01,                    // advance_loc2 256
      0x12, 0x07, 0x7e,                    // def_cfa_sf r7, -2 * -8 = 16
      0x04, 0x00, 0x00, 0x01, 0x00,        // advance_loc4 65536
      0x11, 0x06, 0x7d,                    // offset_extended_sf r6: CFA + -3 * -8
      0x13, 0x7c,                          // def_cfa_offset_sf -4 * -8 = 32
  };
  EXPECT_EQ(rule_at(f, 255), frame_rule(CfaBase::kRsp, 8, 0));
  EXPECT_EQ(rule_at(f, 256), frame_rule(CfaBase::kRsp, 16, 0));
  // RBP saved above the CFA cannot be a compiler's prologue: not representable.
  EXPECT_EQ(rule_at(f, 256 + 65536).kind, RuleKind::kFallback);
}

TEST(CfaProgram, SetLocUsesTheFdeEncoding) {
  CfaParams params;
  params.fde_encoding = 0x04;  // udata8, absolute
  const Bytes f = {0x01, 0x10, 0x10, 0, 0, 0, 0, 0, 0,  // set_loc 0x1010
                   0x0e, 0x30};                           // CFA = RSP + 48
  CfaRow row;
  ASSERT_TRUE(run_cfa_program(params, over(kCie), over(f), kBegin, kBegin + 0x0f, row));
  EXPECT_EQ(row.cfa_offset, 8);
  ASSERT_TRUE(run_cfa_program(params, over(kCie), over(f), kBegin, kBegin + 0x10, row));
  EXPECT_EQ(row.cfa_offset, 48);
}

TEST(CfaProgram, UnrepresentableRowsFallBack) {
  // CFA as a DWARF expression (a PLT stub's rule): block of 2 bytes skipped.
  EXPECT_EQ(rule_at({0x0f, 0x02, 0x77, 0x08}, 0).kind, RuleKind::kFallback);
  // RBP kept in another register.
  EXPECT_EQ(rule_at({0x09, 0x06, 0x03}, 0).kind, RuleKind::kFallback);
  // RBP as CFA + offset (val_offset), and via an expression.
  EXPECT_EQ(rule_at({0x14, 0x06, 0x02}, 0).kind, RuleKind::kFallback);
  EXPECT_EQ(rule_at({0x10, 0x06, 0x01, 0x70}, 0).kind, RuleKind::kFallback);
  // CFA based on a register other than RSP/RBP (stack realignment through R10).
  EXPECT_EQ(rule_at({0x0c, 0x0a, 0x00}, 0).kind, RuleKind::kFallback);
  // An expression for another register is fine: only RBP and RA matter.
  EXPECT_EQ(rule_at({0x10, 0x03, 0x01, 0x70}, 0), frame_rule(CfaBase::kRsp, 8, 0));
}

TEST(CfaProgram, UndefinedReturnAddressIsTheOutermostFrame) {
  EXPECT_EQ(rule_at({0x07, 0x10}, 0).kind, RuleKind::kOutermost);
}

TEST(CfaProgram, RejectsUnknownOpcodesAndTruncatedOperands) {
  EXPECT_EQ(rule_at({0x2d}, 0).kind, RuleKind::kEmpty);        // GNU_window_save (SPARC)
  EXPECT_EQ(rule_at({0x0e, 0x80}, 0).kind, RuleKind::kEmpty);  // uleb runs off the end
  EXPECT_EQ(rule_at({0x0f, 0x05, 0x00}, 0).kind, RuleKind::kEmpty);  // block too long
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
