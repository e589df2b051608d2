#include "symbolize/global_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <vector>

#include "symbolize/inline_frames.h"

namespace memloupe::symbolize {
namespace {

// Where variables with a fixed address are declared: at a unit's top level, in
// namespaces, and (static locals) in functions and their blocks. Class bodies
// hold only declarations of static members; their definitions are outside.
bool may_hold_variables(int tag) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_subprogram:
    case DW_TAG_lexical_block:
      return true;
    default:
      return false;
  }
}

// The DWARF address of a variable that lives at one: a single DW_OP_addr.
bool fixed_address(Dwarf_Die* variable, Dwarf_Addr& address) {
  Dwarf_Attribute attr;
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  if (dwarf_attr(variable, DW_AT_location, &attr) == nullptr || dwarf_getlocation(&attr, &ops, &n) != 0 || n != 1 ||
      ops[0].atom != DW_OP_addr)
    return false;
  address = ops[0].number;
  return true;
}

}  // namespace

GlobalLines::GlobalLines(ElfFile& file) {
  Dwfl_Module* module = file.module();
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = nullptr; (cu = dwfl_module_nextcu(module, cu, &bias)) != nullptr;) {
    Dwarf_Attribute attr;
    const char* comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    // Depth first with an explicit stack of the scopes still to walk.
    std::vector<Dwarf_Die> scopes{*cu};
    while (!scopes.empty()) {
      Dwarf_Die scope = scopes.back();
      scopes.pop_back();
      Dwarf_Die die;
      if (dwarf_child(&scope, &die) != 0) continue;
      do {
        const int tag = dwarf_tag(&die);
        Dwarf_Addr address = 0;
        int line = 0;
        if (may_hold_variables(tag)) {
          scopes.push_back(die);
        } else if (tag == DW_TAG_variable && fixed_address(&die, address) && dwarf_decl_line(&die, &line) == 0) {
          declared_.emplace(address + bias, Declared{die, comp_dir, static_cast<uint32_t>(line)});
        }
      } while (dwarf_siblingof(&die, &die) == 0);
    }
  }
}

const SourceLine* GlobalLines::at(uint64_t vaddr) const {
  if (const auto it = lines_.find(vaddr); it != lines_.end()) return &it->second;
  const auto d = declared_.find(vaddr);
  if (d == declared_.end()) return nullptr;
  // The declaration's file (through DW_AT_specification for a static member
  // defined outside its class).
  Dwarf_Die die = d->second.die;
  return &lines_.emplace(vaddr, SourceLine{full_path(dwarf_decl_file(&die), d->second.comp_dir), d->second.line})
              .first->second;
}

}  // namespace memloupe::symbolize
