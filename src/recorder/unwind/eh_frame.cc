#include "recorder/unwind/eh_frame.h"

#include <cstring>

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr uint8_t kTableEncoding = pe::kDatarel | pe::kSdata4;
constexpr size_t kMaxAugmentation = 8;  // "zPLRS" plus room; longer is not GCC/LLVM

// Reads an entry's length (32-bit, or 64-bit after the 0xffffffff escape) and
// returns a cursor over its body; fails on a zero-length terminator.
DwarfCursor entry_body(uintptr_t at, Span tables) {
  DwarfCursor c(at, tables.begin, tables.end);
  uint64_t len = c.fixed<uint32_t>();
  if (len == 0xffffffffu) len = c.fixed<uint64_t>();
  if (len == 0) c.skip(~uint64_t{0});  // fail
  return c.sub(len);
}

// Fills the CIE-derived fields of `e` from the CIE at `cie`.
bool parse_cie(uintptr_t cie, Span tables, FrameEntry& e, bool& has_augmentation_data) {
  DwarfCursor c = entry_body(cie, tables);
  if (c.fixed<uint32_t>() != 0) return false;  // a CIE's id is 0 in .eh_frame
  const uint8_t version = c.u8();
  if (version != 1 && version != 3 && version != 4) return false;
  char aug[kMaxAugmentation + 1] = {};
  for (size_t i = 0;; ++i) {
    const char ch = static_cast<char>(c.u8());
    if (!c.ok() || i == kMaxAugmentation) return false;
    if (ch == '\0') break;
    aug[i] = ch;
  }
  if (version == 4) c.skip(2);  // address_size, segment_selector_size
  e.params.code_align = c.uleb();
  e.params.data_align = c.sleb();
  e.params.ra_reg = version == 1 ? c.u8() : c.uleb();
  has_augmentation_data = aug[0] == 'z';
  if (aug[0] != '\0' && aug[0] != 'z') return false;  // pre-'z' augmentations ("eh")
  if (has_augmentation_data) {
    DwarfCursor data = c.sub(c.uleb());
    for (const char* a = aug + 1; *a != '\0'; ++a) {
      switch (*a) {
        case 'L': data.u8(); break;                  // LSDA encoding: not needed
        case 'P': data.encoded(data.u8()); break;    // personality: skipped
        case 'R': e.params.fde_encoding = data.u8(); break;
        case 'S': e.signal_frame = true; break;
        default: return false;
      }
    }
    if (!data.ok()) return false;
  }
  e.cie_instructions = c;
  return c.ok();
}

// The Linux x86-64 signal return trampoline (glibc's __restore_rt):
//   mov $__NR_rt_sigreturn, %rax ; syscall
constexpr uint8_t kSigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

bool is_sigreturn(uintptr_t code, Span text) {
  if (!text.contains(code, sizeof kSigreturn)) return false;
  return std::memcmp(reinterpret_cast<const void*>(code), kSigreturn, sizeof kSigreturn) == 0;
}

}  // namespace

FdeSearch search_fde(uintptr_t eh_frame_hdr, Span tables, uintptr_t pc) noexcept {
  DwarfCursor c(eh_frame_hdr, tables.begin, tables.end);
  const uint8_t version = c.u8();
  const uint8_t frame_ptr_enc = c.u8();
  const uint8_t count_enc = c.u8();
  const uint8_t table_enc = c.u8();
  c.encoded(frame_ptr_enc, eh_frame_hdr);
  if (!c.ok() || version != 1 || count_enc == pe::kOmit || table_enc != kTableEncoding) {
    return {};
  }
  const uint64_t count = c.encoded(count_enc, eh_frame_hdr);
  const uintptr_t table = c.pos();
  if (!c.ok() || count > (tables.end - table) / 8) return {};
  auto entry = [&](uint64_t i, int word) {
    int32_t v;
    std::memcpy(&v, reinterpret_cast<const void*>(table + i * 8 + word * 4), 4);
    return eh_frame_hdr + static_cast<uintptr_t>(static_cast<intptr_t>(v));
  };
  if (count == 0 || pc < entry(0, 0)) return {true, 0};
  // Invariant: entry(lo).start <= pc < entry(hi).start (hi == count: past the end).
  uint64_t lo = 0, hi = count;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (entry(mid, 0) <= pc) lo = mid; else hi = mid;
  }
  return {true, entry(lo, 1)};
}

std::optional<FrameEntry> parse_fde(uintptr_t fde, Span tables) noexcept {
  DwarfCursor c = entry_body(fde, tables);
  const uintptr_t id_pos = c.pos();
  const uint32_t cie_offset = c.fixed<uint32_t>();
  if (!c.ok() || cie_offset == 0 || cie_offset > id_pos) return std::nullopt;
  FrameEntry e;
  bool has_augmentation_data = false;
  if (!parse_cie(id_pos - cie_offset, tables, e, has_augmentation_data)) return std::nullopt;
  e.pc_begin = c.encoded(e.params.fde_encoding);
  e.pc_end = e.pc_begin + c.encoded(e.params.fde_encoding & 0x0f);
  if (has_augmentation_data) c.skip(c.uleb());
  if (!c.ok()) return std::nullopt;
  e.fde_instructions = c;
  return e;
}

Rule compute_rule(uintptr_t pc) noexcept {
  ModuleTables m;
  if (!find_module(pc, m)) return kind_rule(RuleKind::kUnknown);
  const Rule fallback = kind_rule(RuleKind::kFallback);
  if (m.eh_frame_hdr == 0) return fallback;
  const FdeSearch found = search_fde(m.eh_frame_hdr, m.tables, pc);
  if (!found.table_usable) return fallback;  // libunwind can still scan .eh_frame
  const Rule no_info = kind_rule(RuleKind::kNoInfo);
  if (found.fde == 0) return no_info;
  const std::optional<FrameEntry> e = parse_fde(found.fde, m.tables);
  if (!e) return fallback;
  if (pc < e->pc_begin || pc >= e->pc_end) return no_info;
  // A signal frame's FDE starts one byte before the trampoline so that "return
  // address - 1" finds it; the trampoline itself must be the one we can decode.
  if (e->signal_frame) {
    return is_sigreturn(pc + 1, m.text) ? kind_rule(RuleKind::kSignal) : fallback;
  }
  CfaRow row;
  if (!run_cfa_program(e->params, e->cie_instructions, e->fde_instructions, e->pc_begin, pc,
                       row)) {
    return fallback;
  }
  return reduce_row(row);
}

}  // namespace memloupe::recorder::unwind_detail
