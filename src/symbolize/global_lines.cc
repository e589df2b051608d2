#include "symbolize/global_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <sys/stat.h>

#include <cstring>
#include <vector>

#include "symbolize/inline_frames.h"

namespace memloupe::symbolize {
namespace {

// Where variables with a fixed address are declared: at a unit's top level, in
// namespaces, and (static locals) in functions and their blocks. Class bodies
// hold only declarations of static members; their definitions are outside.
// A function's declaration (a C unit's prototype of what it calls, libc's
// units have ~8000) has no body, so no static locals: only its parameters.
// An inline function's abstract instance (DW_AT_inline, no address) is kept:
// GCC puts its static locals, with their DW_OP_addr, there.
bool may_hold_variables(int tag, Dwarf_Die* die) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_lexical_block:
      return true;
    case DW_TAG_subprogram:
      return !dwarf_hasattr(die, DW_AT_declaration);
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

std::optional<InflatedSource> GlobalLines::key_of(const ElfFile& file) {
  Dwfl_Module* module = file.module();
  Dwarf_Addr bias = 0;
  if (dwfl_module_getdwarf(module, &bias) == nullptr) return std::nullopt;
  const unsigned char* bits = nullptr;
  GElf_Addr where = 0;
  const int n = dwfl_module_build_id(module, &bits, &where);
  const char* main_file = nullptr;
  const char* debug_file = nullptr;
  dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file, &debug_file);
  const char* path = debug_file != nullptr ? debug_file : main_file;
  struct stat st;
  if (n <= 0 || path == nullptr || stat(path, &st) != 0) return std::nullopt;
  return InflatedSource::of({bits, bits + n}, st);
}

namespace {

// The comp_dir of the unit of `die`, or null.
const char* comp_dir_of(Dwarf_Die* die) {
  Dwarf_Die cu;
  Dwarf_Attribute attr;
  if (dwarf_diecu(die, &cu, nullptr, nullptr) == nullptr) return nullptr;
  return dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
}

// One variable of a table, as stored (native byte order, as the cache's).
struct Row {
  uint64_t address;
  uint64_t offset;
  uint32_t line;
  uint32_t zero;
};

}  // namespace

GlobalLines::GlobalLines(ElfFile& file, const std::optional<InflatedCache>& cache) : module_(file.module()) {
  dwarf_ = dwfl_module_getdwarf(module_, &bias_);
  if (dwarf_ == nullptr) return;
  const std::optional<InflatedSource> key = cache ? key_of(file) : std::nullopt;
  if (key) {
    if (const auto bytes = cache->find_globals(*key)) {
      if (auto table = decode(*bytes)) {
        declared_ = std::move(*table);
        from_cache_ = true;
        return;
      }
    }
  }
  declared_ = walk();
  if (key && addressable(declared_)) cache->store_globals(*key, encode(declared_));
}

bool GlobalLines::addressable(const Table& table) const {
  for (const auto& [address, d] : table) {
    Dwarf_Die again;
    if (dwarf_offdie(dwarf_, d.offset, &again) == nullptr || again.addr != d.die.addr ||
        comp_dir_of(&again) != d.comp_dir)
      return false;
  }
  return true;
}

GlobalLines::Table GlobalLines::walk() const {
  Table table;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = nullptr; (cu = dwfl_module_nextcu(module_, cu, &bias)) != nullptr;) {
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
        if (may_hold_variables(tag, &die)) {
          scopes.push_back(die);
        } else if (tag == DW_TAG_variable && fixed_address(&die, address) && dwarf_decl_line(&die, &line) == 0) {
          table.emplace(address, Declared{dwarf_dieoffset(&die), static_cast<uint32_t>(line), die, comp_dir, true});
        }
      } while (dwarf_siblingof(&die, &die) == 0);
    }
  }
  return table;
}

std::vector<uint8_t> GlobalLines::encode(const Table& table) {
  std::vector<uint8_t> bytes(table.size() * sizeof(Row));
  uint8_t* out = bytes.data();
  for (const auto& [address, declared] : table) {
    const Row row{address, declared.offset, declared.line, 0};
    std::memcpy(out, &row, sizeof row);
    out += sizeof row;
  }
  return bytes;
}

std::optional<GlobalLines::Table> GlobalLines::decode(std::span<const uint8_t> bytes) {
  if (bytes.size() % sizeof(Row) != 0) return std::nullopt;
  Table table;
  for (size_t at = 0; at < bytes.size(); at += sizeof(Row)) {
    Row row;
    std::memcpy(&row, bytes.data() + at, sizeof row);
    if (row.zero != 0 || !table.emplace(row.address, Declared{.offset = row.offset, .line = row.line}).second) return std::nullopt;
  }
  return table;
}

const SourceLine* GlobalLines::at(uint64_t vaddr) const {
  if (const auto it = lines_.find(vaddr); it != lines_.end()) return &it->second;
  const auto d = declared_.find(vaddr - bias_);
  if (d == declared_.end()) return nullptr;
  Dwarf_Die die = d->second.die;
  const char* comp_dir = d->second.comp_dir;
  if (!d->second.walked) {
    Dwarf_Addr address = 0;
    int line = 0;
    if (dwarf_offdie(dwarf_, d->second.offset, &die) == nullptr || dwarf_tag(&die) != DW_TAG_variable ||
        !fixed_address(&die, address) || address != d->first || dwarf_decl_line(&die, &line) != 0 ||
        static_cast<uint32_t>(line) != d->second.line) {
      // A table that does not describe this file: what the walk finds instead.
      from_cache_ = false;
      declared_ = walk();
      return at(vaddr);
    }
    comp_dir = comp_dir_of(&die);
  }
  // The declaration's file (through DW_AT_specification for a static member
  // defined outside its class).
  return &lines_.emplace(vaddr, SourceLine{full_path(dwarf_decl_file(&die), comp_dir), d->second.line})
              .first->second;
}

}  // namespace memloupe::symbolize
