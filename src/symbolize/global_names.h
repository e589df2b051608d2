// Which global variable holds a given address: the object symbol (or, where
// none covers it, the section) of the module the trace recorded there. Names
// the global roots of heap snapshots, at finalise time (written into the trace)
// and at load time for traces finalised before that (src/retention).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "format/snapshot_annex.h"
#include "symbolize/data_symbols.h"
#include "symbolize/global_lines.h"
#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace memloupe::symbolize {

class GlobalNamer {
 public:
  // The map comes with each name(): a namer may be prepared before the map is
  // final (prepared_symbolizers.h).
  // The modules' globals tables are kept in the environment's cache folder
  // (inflated_cache.h), or given `cache`.
  explicit GlobalNamer(Symbolizer& symbolizer) : GlobalNamer(symbolizer, InflatedCache::from_environment()) {}
  GlobalNamer(Symbolizer& symbolizer, std::optional<InflatedCache> cache)
      : symbolizer_(symbolizer), cache_(std::move(cache)) {}

  // The variable holding `address` in `modules` (its runtime start, size,
  // name, and the source file and line of its declaration when the module has
  // DWARF), else the section; nothing if the module or its file is unknown.
  std::optional<format::SnapshotName> name(const ModuleMap& modules, uint64_t address);

  // Reads what naming globals in `module` needs (its data symbols and their
  // declarations' lines) ahead of the addresses; silent, as Symbolizer::prepare.
  void prepare(const Module& module);

 private:
  struct Data {
    DataSymbols symbols;
    GlobalLines lines;
  };
  Data* data_of(const Module& m);
  Data* data_of(ElfFile* file);

  Symbolizer& symbolizer_;
  std::optional<InflatedCache> cache_;
  std::map<const ElfFile*, std::unique_ptr<Data>> data_;
};

}  // namespace memloupe::symbolize
