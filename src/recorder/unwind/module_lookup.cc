#include "recorder/unwind/module_lookup.h"

#include <link.h>

namespace memloupe::recorder::unwind_detail {
namespace {

struct Query {
  uintptr_t pc;
  ModuleTables* out;
};

Span segment_span(const dl_phdr_info& info, const ElfW(Phdr) & ph) {
  const uintptr_t begin = info.dlpi_addr + ph.p_vaddr;
  return Span{begin, begin + ph.p_memsz};
}

int visit(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto& q = *static_cast<Query*>(data);
  const ElfW(Phdr)* text = nullptr;
  const ElfW(Phdr)* eh = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0 &&
        segment_span(*info, ph).contains(q.pc)) {
      text = &ph;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh = &ph;
    }
  }
  if (text == nullptr) return 0;  // not this module: keep iterating
  ModuleTables& m = *q.out;
  m.text = segment_span(*info, *text);
  if (eh == nullptr) return 1;
  m.eh_frame_hdr = info->dlpi_addr + eh->p_vaddr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) != 0 &&
        segment_span(*info, ph).contains(m.eh_frame_hdr)) {
      // Only the file-backed part is certain to hold table bytes; the rest is .bss.
      const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
      m.tables = Span{begin, begin + ph.p_filesz};
    }
  }
  if (m.tables.end == 0) m.eh_frame_hdr = 0;  // tables outside any loaded segment
  return 1;
}

}  // namespace

bool find_module(uintptr_t pc, ModuleTables& out) noexcept {
  out = ModuleTables{};
  Query q{pc, &out};
  return dl_iterate_phdr(visit, &q) != 0;
}

}  // namespace memloupe::recorder::unwind_detail
