#include "symbolize/global_names.h"

namespace memloupe::symbolize {

GlobalNamer::Data* GlobalNamer::data_of(const Module& m) { return data_of(symbolizer_.file(m)); }

void GlobalNamer::prepare(const Module& m) { data_of(symbolizer_.file_quietly(m)); }

GlobalNamer::Data* GlobalNamer::data_of(ElfFile* file) {
  if (file == nullptr) return nullptr;
  auto& slot = data_[file];
  if (!slot) slot.reset(new Data{DataSymbols(*file), GlobalLines(*file, cache_)});  // (clang 14: no make_unique of an aggregate)
  return slot.get();
}

std::optional<format::SnapshotName> GlobalNamer::name(const ModuleMap& modules, uint64_t address) {
  const auto m = modules.find_any_time(address);
  if (!m) return std::nullopt;
  const Module& module = modules[*m];
  Data* data = data_of(module);
  if (data == nullptr) return std::nullopt;
  const uint64_t vaddr = address - module.load_bias;
  if (const DataSymbol* s = data->symbols.symbol_at(vaddr)) {
    format::SnapshotName n{s->vaddr + module.load_bias, s->size, s->name, {}, 0};
    if (const SourceLine* line = data->lines.at(s->vaddr)) {
      n.file = line->file;
      n.line = line->line;
    }
    return n;
  }
  // No symbol: GOT entries, compiler-made objects, allocator-internal data.
  if (const DataSection* sec = data->symbols.section_at(vaddr))
    return format::SnapshotName{sec->vaddr + module.load_bias, sec->size, sec->name, {}, 0};
  return std::nullopt;
}

}  // namespace memloupe::symbolize
