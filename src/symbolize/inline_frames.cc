#include "symbolize/inline_frames.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "symbolize/demangle.h"

namespace memloupe::symbolize {

// Source paths as absolute as the DWARF allows: a relative name is relative to
// its unit's compilation directory, if that is absolute. (Distributions build
// with -fdebug-prefix-map, leaving relative directories like "./elf" whose
// file names are already relative to the source root: joining those would
// only repeat the directory.)
std::string full_path(const char* file, const char* comp_dir) {
  if (file == nullptr) return {};
  std::string out = file;
  if (file[0] != '/' && comp_dir != nullptr && comp_dir[0] == '/') {
    out = std::string(comp_dir) + "/" + out;
  }
  // "a/./b" -> "a/b", "./x" -> "x" (".." is kept: it may cross a symlink).
  for (size_t at; (at = out.find("/./")) != std::string::npos;) out.erase(at, 2);
  while (out.starts_with("./")) out.erase(0, 2);
  return out;
}

namespace {

uint32_t udata_attr(Dwarf_Die* die, int name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) return 0;
  return static_cast<uint32_t>(value);
}

// The call site of an inlined subroutine: DW_AT_call_file (an index into its
// unit's file table), DW_AT_call_line, DW_AT_call_column.
reader::OwnedFrame call_site(Dwarf_Die* inlined) {
  reader::OwnedFrame site{{}, {}, udata_attr(inlined, DW_AT_call_line),
                          udata_attr(inlined, DW_AT_call_column)};
  Dwarf_Attribute attr;
  Dwarf_Word index = 0;
  Dwarf_Die cu;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_attr(inlined, DW_AT_call_file, &attr) != nullptr && dwarf_formudata(&attr, &index) == 0 &&
      dwarf_diecu(inlined, &cu, nullptr, nullptr) != nullptr &&
      dwarf_getsrcfiles(&cu, &files, &count) == 0 && index < count) {
    Dwarf_Attribute comp_dir;
    site.file = full_path(dwarf_filesrc(files, index, nullptr, nullptr),
                          dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &comp_dir)));
  }
  return site;
}

bool is_frame(int tag) { return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine; }

// DIEs whose subtree can hold code scopes. Code scopes (functions, inlined
// calls, blocks) have address ranges; the others are containers without.
bool is_code_scope(int tag) {
  switch (tag) {
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
      return true;
    default:
      return false;
  }
}
bool is_container(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_module:
      return true;
    default:
      return false;
  }
}

// One pass over a unit's DIE tree for the sorted pcs of that unit. Parents are
// visited before children, so each pc's chain fills outermost first.
class UnitWalk {
 public:
  UnitWalk(std::span<const uint64_t> pcs, std::vector<std::vector<Dwarf_Die>>& chains)
      : pcs_(pcs), chains_(chains) {}

  void children(Dwarf_Die* parent, size_t lo, size_t hi) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      visit(&child, lo, hi);
    } while (dwarf_siblingof(&child, &child) == 0);
  }

 private:
  // [lo, hi) bounds the indices of the pcs the parent may contain.
  void visit(Dwarf_Die* die, size_t lo, size_t hi) {
    const int tag = dwarf_tag(die);
    if (is_container(tag)) return children(die, lo, hi);
    if (!is_code_scope(tag)) return;

    size_t first = hi, last = lo;  // bounds of the pcs inside this scope
    Dwarf_Addr base, start, end;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &start, &end)) > 0;) {
      auto b = std::lower_bound(pcs_.begin() + lo, pcs_.begin() + hi, start);
      auto e = std::lower_bound(b, pcs_.begin() + hi, end);
      if (b == e) continue;
      const size_t i = b - pcs_.begin(), j = e - pcs_.begin();
      first = std::min(first, i);
      last = std::max(last, j);
      if (is_frame(tag)) {
        for (size_t k = i; k < j; ++k) chains_[k].push_back(*die);
      }
    }
    // A scope's children lie within its ranges: no pc inside, nothing below.
    if (first < last) children(die, first, last);
  }

  std::span<const uint64_t> pcs_;
  std::vector<std::vector<Dwarf_Die>>& chains_;
};

}  // namespace

std::vector<std::vector<Dwarf_Die>> function_chains(Dwarf_Die* cu, std::span<const uint64_t> pcs) {
  std::vector<std::vector<Dwarf_Die>> chains(pcs.size());
  UnitWalk(pcs, chains).children(cu, 0, pcs.size());
  return chains;
}

std::string dwarf_function_name(Dwarf_Die* scope) {
  // A C++ linkage name, demangled, is qualified and carries the parameter
  // types. Any other linkage name is an assembler label (glibc's "__GI_"
  // aliases), so C functions get their DW_AT_name. dwarf_attr_integrate
  // follows DW_AT_abstract_origin and DW_AT_specification to the declaration
  // that holds the names.
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    const char* s = dwarf_formstring(dwarf_attr_integrate(scope, name, &attr));
    if (s != nullptr && s[0] == '_' && s[1] == 'Z') return demangle(s);
  }
  const char* s = dwarf_formstring(dwarf_attr_integrate(scope, DW_AT_name, &attr));
  return s != nullptr ? s : "";
}

const std::string& InlineResolver::function_name(Dwarf_Die* scope) {
  Dwarf_Die origin_mem;
  Dwarf_Attribute attr;
  Dwarf_Die* origin = scope;
  if (dwarf_attr(scope, DW_AT_abstract_origin, &attr) != nullptr &&
      dwarf_formref_die(&attr, &origin_mem) != nullptr) {
    origin = &origin_mem;
  }
  auto [it, inserted] = names_.try_emplace(dwarf_dieoffset(origin));
  if (inserted) it->second = dwarf_function_name(origin);
  return it->second;
}

std::vector<reader::OwnedFrame> InlineResolver::frames_for(uint64_t pc, std::span<Dwarf_Die> chain,
                                                           Dwarf_Die* cu, Dwarf_Addr bias) {
  std::vector<reader::OwnedFrame> frames;
  // `where` walks outwards: first pc's own line, then each inlined call site.
  reader::OwnedFrame where;
  // With its unit known, the line comes from the unit's own table (Dwfl's
  // lookup needs .debug_aranges: unit_index.h).
  if (Dwarf_Line* line = cu != nullptr ? dwarf_getsrc_die(cu, pc - bias) : nullptr) {
    int lineno = 0, column = 0;
    (void)dwarf_lineno(line, &lineno);
    (void)dwarf_linecol(line, &column);
    Dwarf_Attribute comp_dir;
    where.file = full_path(dwarf_linesrc(line, nullptr, nullptr),
                           dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &comp_dir)));
    where.line = static_cast<uint32_t>(std::max(lineno, 0));
    where.column = static_cast<uint32_t>(std::max(column, 0));
  } else if (Dwfl_Line* line = dwfl_module_getsrc(module_, pc)) {
    int lineno = 0, column = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &lineno, &column, nullptr, nullptr);
    where.file = full_path(file, dwfl_line_comp_dir(line));
    where.line = static_cast<uint32_t>(std::max(lineno, 0));
    where.column = static_cast<uint32_t>(std::max(column, 0));
  }
  // chain is outermost first; the innermost subprogram ends the list (a
  // function nested in another is a frame of its own, not of the outer one).
  for (size_t i = chain.size(); i-- > 0;) {
    Dwarf_Die* scope = &chain[i];
    where.function = function_name(scope);
    frames.push_back(where);
    if (dwarf_tag(scope) == DW_TAG_subprogram) break;
    where = call_site(scope);
  }
  if (frames.empty()) {
    if (const std::string* name = symbol_name(pc)) where.function = *name;
    if (!where.function.empty() || !where.file.empty()) frames.push_back(std::move(where));
  }
  return frames;
}

const std::string* InlineResolver::symbol_name(uint64_t pc) {
  if (!symbols_read_) {
    symbols_read_ = true;
    const int n = dwfl_module_getsymtab(module_);
    struct Raw {
      uint64_t start, size;
      int rank;  // among aliases at one address, the lowest rank is named
      const char* name;
    };
    std::vector<Raw> raw;
    for (int i = 1; i < n; ++i) {
      GElf_Sym sym;
      GElf_Addr addr = 0;
      const char* name = dwfl_module_getsym_info(module_, i, &sym, &addr, nullptr, nullptr, nullptr);
      const int type = GELF_ST_TYPE(sym.st_info);
      if (name == nullptr || name[0] == '\0' || sym.st_shndx == SHN_UNDEF ||
          (type != STT_FUNC && type != STT_GNU_IFUNC)) {
        continue;
      }
      // Prefer the exported name ("malloc") to internal aliases ("__libc_malloc").
      const int bind = GELF_ST_BIND(sym.st_info);
      const int rank = (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 2 : 4) + (name[0] == '_' ? 1 : 0);
      raw.push_back({addr, sym.st_size, rank, name});
    }
    std::ranges::sort(raw, [](const Raw& a, const Raw& b) {
      return std::tie(a.start, a.rank) < std::tie(b.start, b.rank);
    });
    for (const Raw& r : raw) {
      if (!symbols_.empty() && symbols_.back().start == r.start) continue;
      symbols_.push_back({.start = r.start, .size = r.size, .mangled = r.name});
    }
  }
  auto it = std::ranges::upper_bound(symbols_, pc, {}, &Symbol::start);
  if (it == symbols_.begin()) return nullptr;
  --it;
  // A sized symbol names only its own bytes; an unsized one (assembly labels)
  // names everything up to the next symbol.
  if (it->size != 0 && pc >= it->start + it->size) return nullptr;
  return &demangle_once(it->mangled, it->name);
}

std::vector<std::vector<reader::OwnedFrame>> InlineResolver::resolve(std::span<const uint64_t> pcs) {
  // Sort (by index) and group by compilation unit.
  std::vector<size_t> order(pcs.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::sort(order, [&](size_t a, size_t b) { return pcs[a] < pcs[b]; });
  struct Unit {
    Dwarf_Die die;
    Dwarf_Addr bias;
    std::vector<size_t> members;  // indices into pcs, ascending pc
  };
  std::map<uint64_t, Unit> units;
  std::vector<size_t> no_unit;
  for (size_t i : order) {
    Dwarf_Addr bias = 0;
    if (Dwarf_Die* cu = units_.find(pcs[i], bias)) {
      auto& unit = units.try_emplace(dwarf_dieoffset(cu), Unit{*cu, bias, {}}).first->second;
      unit.members.push_back(i);
    } else {
      no_unit.push_back(i);
    }
  }

  std::vector<std::vector<reader::OwnedFrame>> out(pcs.size());
  for (auto& [offset, unit] : units) {
    std::vector<uint64_t> unit_pcs;  // in the unit's DWARF addresses
    for (size_t i : unit.members) unit_pcs.push_back(pcs[i] - unit.bias);
    std::vector<std::vector<Dwarf_Die>> chains = function_chains(&unit.die, unit_pcs);
    for (size_t k = 0; k < unit.members.size(); ++k) {
      out[unit.members[k]] = frames_for(pcs[unit.members[k]], chains[k], &unit.die, unit.bias);
    }
  }
  for (size_t i : no_unit) out[i] = frames_for(pcs[i], {}, nullptr, 0);
  return out;
}

}  // namespace memloupe::symbolize
