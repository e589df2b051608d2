// Naming a snapshot's roots (snapshot_load.h): globals through the ELF symbol
// tables of the modules the trace recorded, one root per variable that holds a
// pointer (the words no symbol covers are named by their section); stack frames
// by the function their pc lies in; TLS blocks by their module.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "reader/snapshot_decoder.h"
#include "retention/heap_graph.h"
#include "symbolize/data_symbols.h"
#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace memloupe::retention {

class RootNamer {
 public:
  explicit RootNamer(const symbolize::ModuleMap& modules);

  // The named roots of `raw` and, for each of its edges that leaves a root,
  // the index of the named root it leaves (a global segment becomes one root
  // per variable: the edge's word offset says which).
  struct Named {
    std::vector<Root> roots;
    std::vector<uint32_t> edge_root;  // per raw edge from a root; UINT32_MAX for block edges
  };
  // edge_root of an edge that leaves the allocator's own state (not a root).
  static constexpr uint32_t kNotARoot = UINT32_MAX - 1;
  Named name(const reader::RawSnapshot& raw);

 private:
  const symbolize::DataSymbols* data_of(const symbolize::Module& m);
  void name_frame(Root& root, uint64_t pc);

  const symbolize::ModuleMap& modules_;
  symbolize::Symbolizer symbolizer_;
  std::map<const symbolize::ElfFile*, std::unique_ptr<symbolize::DataSymbols>> data_;
};

}  // namespace memloupe::retention
