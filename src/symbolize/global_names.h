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
  GlobalNamer(const ModuleMap& modules, Symbolizer& symbolizer) : modules_(modules), symbolizer_(symbolizer) {}

  // The variable holding `address` (its runtime start, size, name, and the
  // source file and line of its declaration when the module has DWARF), else
  // the section; nothing if the module or its file is unknown.
  std::optional<format::SnapshotName> name(uint64_t address);

 private:
  struct Data {
    DataSymbols symbols;
    GlobalLines lines;
  };
  const Data* data_of(const Module& m);

  const ModuleMap& modules_;
  Symbolizer& symbolizer_;
  std::map<const ElfFile*, std::unique_ptr<Data>> data_;
};

}  // namespace memloupe::symbolize
