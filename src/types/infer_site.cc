#include "types/infer_site.h"

#include <dwarf.h>
#include <gelf.h>

#include <algorithm>
#include <cstring>

#include "symbolize/demangle.h"
#include "types/dwarf_types.h"
#include "types/type_names.h"

namespace memloupe::types {
namespace {

bool is_code_scope(int tag) {
  return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
         tag == DW_TAG_catch_block;
}

// A constructor is a member function named as its class ("Foo" in "Foo<int>").
std::optional<Dwarf_Die> constructed_class(Dwarf_Die scope) {
  auto cls = this_class(scope);
  if (!cls) return std::nullopt;
  const char* cls_name = dwarf_diename(&*cls);
  if (cls_name == nullptr || base_name(cls_name) != die_name(scope)) return std::nullopt;
  return cls;
}

bool is_allocator(std::string_view cls) {
  const std::string_view base = base_name(cls);
  return base == "__new_allocator" || base == "new_allocator" || base == "allocator";
}

}  // namespace

const std::string& SiteInferrer::type_name(Dwarf_Die type) {
  std::string& slot = names_[dwarf_dieoffset(&type)];  // stable across later insertions
  if (!slot.empty()) return slot;
  Dwarf_Attribute attr;
  Dwarf_Die target;
  const bool has_target = dwarf_formref_die(dwarf_attr(&type, DW_AT_type, &attr), &target) != nullptr;
  std::string name;
  switch (dwarf_tag(&type)) {
    case DW_TAG_pointer_type:
      name = (has_target ? type_name(target) : std::string("void")) + "*";
      break;
    case DW_TAG_const_type:
      name = (has_target ? type_name(target) : std::string("void")) + " const";
      break;
    case DW_TAG_typedef:
    case DW_TAG_volatile_type:
      name = has_target ? type_name(target) : std::string("void");
      break;
    default: {
      const char* own = dwarf_diename(&type);
      name = scope_prefix(type) + (own != nullptr ? own : "(anonymous)");
    }
  }
  slot = tidy_type_name(name);
  return slot;
}

const std::string& SiteInferrer::scope_prefix(Dwarf_Die type) {
  static const std::string kNone;
  Dwarf_Die cu;
  if (dwarf_diecu(&type, &cu, nullptr, nullptr) == nullptr) return kNone;
  if (!units_walked_[dwarf_dieoffset(&cu)]) {
    units_walked_[dwarf_dieoffset(&cu)] = true;
    // Namespaces and classes only: code scopes hold local types, which keep
    // their bare names.
    auto walk = [&](auto& self, Dwarf_Die* parent, const std::string& prefix) -> void {
      Dwarf_Die child;
      if (dwarf_child(parent, &child) != 0) return;
      do {
        const int tag = dwarf_tag(&child);
        const bool container = tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                               tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
        if (!prefix.empty() && (container || tag == DW_TAG_enumeration_type || tag == DW_TAG_typedef))
          prefixes_[dwarf_dieoffset(&child)] = prefix;
        if (container && dwarf_haschildren(&child)) {
          const char* name = dwarf_diename(&child);
          self(self, &child, prefix + (name != nullptr ? name : "(anonymous namespace)") + "::");
        }
      } while (dwarf_siblingof(&child, &child) == 0);
    };
    walk(walk, &cu, "");
  }
  auto it = prefixes_.find(dwarf_dieoffset(&type));
  return it == prefixes_.end() ? kNone : it->second;
}

std::optional<Candidate> SiteInferrer::describe(Dwarf_Die type, TypeRule rule) {
  const auto size = type_size(type);
  if (!size) return std::nullopt;
  const char* name = dwarf_diename(&type);
  if (name != nullptr && base_name(name) == "_Sp_counted_ptr_inplace") {
    // make_shared's one block: the control block with the object inside.
    auto object = template_type(type, 0);
    if (!object) return std::nullopt;
    const auto object_size = type_size(*object);
    if (!object_size) return std::nullopt;
    return Candidate{type_name(*object), *object_size, *size, TypeRule::MakeShared};
  }
  return Candidate{type_name(type), *size, 0, rule};
}

std::optional<Candidate> SiteInferrer::constructor(Dwarf_Die scope, TypeRule rule) {
  auto cls = constructed_class(scope);
  if (!cls) return std::nullopt;
  return describe(*cls, rule);
}

std::optional<Candidate> SiteInferrer::inlined_constructor(Dwarf_Die subprogram, uint64_t pc) {
  // The inlined constructor calls whose code starts in [pc, pc + window) and
  // that do not hold the call itself (that would be an enclosing object's
  // constructor doing the `new`). Earliest start wins; among equal starts
  // the outermost, which is visited first.
  std::optional<uint64_t> best_start;
  std::optional<Dwarf_Die> best;
  const uint64_t end = pc + kCtorWindow;
  auto visit = [&](auto& self, Dwarf_Die* parent) -> void {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      const int tag = dwarf_tag(&child);
      if (!is_code_scope(tag) || !ranges_meet(&child, pc - 1, end)) continue;
      if (tag == DW_TAG_inlined_subroutine && !ranges_meet(&child, pc - 1, pc) && constructed_class(child)) {
        const uint64_t start = first_start_in(&child, pc, end).value_or(pc);
        if (!best_start || start < *best_start) {
          best_start = start;
          best = child;
        }
        continue;  // its own inlined calls are its bases' and members' constructors
      }
      self(self, &child);
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  visit(visit, &subprogram);
  if (!best) return std::nullopt;
  return constructor(*best, TypeRule::InlinedConstructor);
}

std::span<const uint8_t> SiteInferrer::code(uint64_t vaddr, uint64_t length) {
  if (!code_sections_) {
    code_sections_.emplace();
    GElf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(module_, &bias);
    for (Elf_Scn* scn = nullptr; elf != nullptr && (scn = elf_nextscn(elf, scn)) != nullptr;) {
      GElf_Shdr header;
      if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_PROGBITS ||
          !(header.sh_flags & SHF_EXECINSTR))
        continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data == nullptr || data->d_buf == nullptr) continue;  // a debug file's NOBITS copy
      code_sections_->push_back(
          {header.sh_addr + bias, {static_cast<const uint8_t*>(data->d_buf), data->d_size}});
    }
  }
  for (const Section& s : *code_sections_) {
    if (vaddr >= s.start && vaddr - s.start < s.bytes.size()) {
      const uint64_t at = vaddr - s.start;
      return s.bytes.subspan(at, std::min<uint64_t>(length, s.bytes.size() - at));
    }
  }
  return {};
}

std::optional<Candidate> SiteInferrer::called_constructor(uint64_t pc) {
  // x86-64 `call rel32` is E8 and four bytes. Instructions are not decoded: an
  // E8 byte inside another instruction is taken only if it lands exactly on a
  // function's first byte, and the first such call decides (a constructor, or
  // nothing).
#if defined(__x86_64__)
  const std::span<const uint8_t> bytes = code(pc, kCallWindow);
  for (size_t i = 0; i + 5 <= bytes.size(); ++i) {
    if (bytes[i] != 0xe8) continue;
    int32_t rel = 0;
    std::memcpy(&rel, bytes.data() + i + 1, 4);
    const uint64_t target = pc + i + 5 + static_cast<uint64_t>(static_cast<int64_t>(rel));
    auto cached = called_.find(target);
    if (cached != called_.end()) return cached->second;
    GElf_Off offset = 1;
    GElf_Sym sym;
    const char* symbol = dwfl_module_addrinfo(module_, target, &offset, &sym, nullptr, nullptr, nullptr);
    if (symbol == nullptr || offset != 0) continue;
    std::optional<Candidate>& answer = called_[target];
    // The symbol's name says cheaply whether it is a constructor at all.
    if (constructor_class(symbolize::demangle(symbol)).empty()) return answer;
    std::vector<uint64_t> biases;
    const std::vector<std::vector<Dwarf_Die>> scopes = function_scopes(units_, {&target, 1}, biases);
    if (!scopes[0].empty()) answer = constructor(scopes[0].back(), TypeRule::CalledConstructor);
    return answer;
  }
#else
  (void)pc;
#endif
  return std::nullopt;
}

std::optional<Candidate> SiteInferrer::from_scope(Dwarf_Die scope) {
  const std::string_view name = die_name(scope);
  if (name == "allocate") {
    auto cls = this_class(scope);
    const char* cls_name = cls ? dwarf_diename(&*cls) : nullptr;
    if (cls_name == nullptr || !is_allocator(cls_name)) return std::nullopt;
    auto element = template_type(*cls, 0);
    return element ? describe(*element, TypeRule::Allocator) : std::nullopt;
  }
  if (base_name(name) == "make_unique") {
    auto object = template_type(scope, 0);
    return object ? describe(*object, TypeRule::MakeUnique) : std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::vector<Candidate>> SiteInferrer::candidates(std::span<const uint64_t> return_vaddrs) {
  std::vector<uint64_t> calls;  // the call instructions' last bytes
  calls.reserve(return_vaddrs.size());
  for (uint64_t r : return_vaddrs) calls.push_back(r - 1);
  std::vector<uint64_t> biases;
  const std::vector<std::vector<Dwarf_Die>> chains = function_scopes(units_, calls, biases);
  std::vector<std::vector<Candidate>> out(return_vaddrs.size());
  for (size_t i = 0; i < return_vaddrs.size(); ++i) {
    const std::vector<Dwarf_Die>& chain = chains[i];
    if (chain.empty()) continue;
    if (auto c = inlined_constructor(chain.back(), return_vaddrs[i] - biases[i])) out[i].push_back(std::move(*c));
    if (auto c = called_constructor(return_vaddrs[i])) out[i].push_back(std::move(*c));
    for (Dwarf_Die scope : chain) {
      if (auto c = from_scope(scope)) out[i].push_back(std::move(*c));
    }
  }
  return out;
}

}  // namespace memloupe::types
