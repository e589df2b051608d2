// Naming a snapshot's roots (snapshot_load.h): globals one root per variable
// that holds a pointer (the words no symbol covers are named by their section),
// from the names the finaliser wrote into the trace or else from the modules'
// symbol tables; stack frames by the function their pc lies in, from the
// trace's symbols or else the modules' DWARF; TLS blocks by their module.
#pragma once

#include <cstdint>
#include <vector>

#include "reader/reader.h"
#include "reader/snapshot_decoder.h"
#include "retention/heap_graph.h"
#include "symbolize/global_names.h"
#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace memloupe::retention {

class RootNamer {
 public:
  // `symbols`: the trace's symbols section (empty before finalising).
  RootNamer(const symbolize::ModuleMap& modules, const reader::SymbolTable& symbols);

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
  void name_frame(Root& root, uint64_t pc);
  // The global holding `word`: from the trace's names, else the module's file.
  std::optional<format::SnapshotName> global_at(const reader::RawSnapshot& raw, uint64_t word);

  const symbolize::ModuleMap& modules_;
  const reader::SymbolTable& symbols_;
  symbolize::Symbolizer symbolizer_;
  symbolize::GlobalNamer globals_;
};

}  // namespace memloupe::retention
