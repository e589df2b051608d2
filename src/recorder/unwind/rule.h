// How to step from one x86-64 frame to its caller, reduced to what fits in 31 bits.
//
// The fast unwinder only understands frames of this shape (which covers every
// compiler-generated frame in practice):
//   CFA        = RSP + off   or   RBP + off          (off a multiple of 8, >= 0)
//   return     = *(CFA - 8)
//   caller RBP = RBP (unchanged)   or   *(CFA - 8*n)  (1 <= n <= 255)
//   caller RSP = CFA
// Anything else (DWARF expressions, registers saved in registers) is kFallback, and
// the whole stack goes to libunwind instead.
#pragma once

#include <cstdint>

namespace memloupe::recorder::unwind_detail {

enum class RuleKind : uint8_t {
  kEmpty = 0,     // never stored: an empty cache slot reads as all zero bits
  kFrame = 1,     // a normal frame described by the fields below
  kOutermost = 2, // the return address is undefined (_start, thread entry): stop here
  kSignal = 3,    // the Linux x86-64 signal trampoline (__restore_rt): read ucontext
  kUnknown = 4,   // the address lies in no loaded module: stop here
  kFallback = 5,  // representable by DWARF but not by this struct: use libunwind
  kNoInfo = 6,    // in a module, but no FDE covers it (e.g. makecontext's
                  // __start_context below a fiber): the frame is written, then stop
};

enum class CfaBase : uint8_t { kRsp = 0, kRbp = 1 };

struct Rule {
  RuleKind kind = RuleKind::kEmpty;
  CfaBase base = CfaBase::kRsp;
  uint32_t cfa_offset = 0;  // bytes, multiple of 8, < kMaxCfaOffset
  uint8_t rbp_slot = 0;     // 0: RBP unchanged; n: caller's RBP is at CFA - 8n

  static constexpr uint32_t kMaxCfaOffset = 8u << 19;

  friend bool operator==(const Rule&, const Rule&) = default;
};

// Bit layout of a packed rule (kRuleBits wide), low to high, chosen so that the hot
// loop decodes it with masks only:
//   kind:3 | cfa_offset/8:19 (so bits & kCfaOffsetMask is the offset in bytes)
//          | base:1 | rbp_slot:8
inline constexpr unsigned kRuleBits = 31;
inline constexpr uint32_t kKindMask = 7;
inline constexpr uint32_t kCfaOffsetMask = ((1u << 19) - 1) << 3;
inline constexpr uint32_t kRbpBaseBit = 1u << 22;
inline constexpr unsigned kRbpSlotShift = 23;

constexpr uint32_t pack_rule(Rule r) {
  return static_cast<uint32_t>(r.kind) | (r.cfa_offset & kCfaOffsetMask) |
         (r.base == CfaBase::kRbp ? kRbpBaseBit : 0) |
         static_cast<uint32_t>(r.rbp_slot) << kRbpSlotShift;
}

constexpr Rule unpack_rule(uint32_t bits) {
  Rule r;
  r.kind = static_cast<RuleKind>(bits & kKindMask);
  r.base = (bits & kRbpBaseBit) != 0 ? CfaBase::kRbp : CfaBase::kRsp;
  r.cfa_offset = bits & kCfaOffsetMask;
  r.rbp_slot = static_cast<uint8_t>(bits >> kRbpSlotShift);
  return r;
}

constexpr Rule frame_rule(CfaBase base, uint32_t cfa_offset, uint8_t rbp_slot) {
  return Rule{RuleKind::kFrame, base, cfa_offset, rbp_slot};
}

constexpr Rule kind_rule(RuleKind kind) { return Rule{kind, CfaBase::kRsp, 0, 0}; }

}  // namespace memloupe::recorder::unwind_detail
