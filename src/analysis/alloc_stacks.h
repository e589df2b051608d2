// The backtraces of chosen allocations, by AllocId: what a heap snapshot needs
// to name its blocks' allocation sites (a snapshot records each block's
// AllocId; the trace's Alloc event holds its backtrace).
//
// One pass over the trace. Every event also goes to an OverviewBuilder, so the
// threads and modules that name roots and frames come from the same read.
// Memory: the distinct backtraces of the chosen allocations, not the trace.
#pragma once

#include <span>
#include <unordered_map>
#include <vector>

#include "analysis/model.h"
#include "analysis/stack_table.h"
#include "reader/reader.h"

namespace memloupe::analysis {

struct AllocStacks {
  Overview overview;  // Overview::error says where the read stopped at damage
  reader::SymbolTable symbols;
  StackTable stacks;
  std::unordered_map<uint64_t, uint32_t> stack_of;  // AllocId value -> id in `stacks`
};

// `wanted` in any order, duplicates allowed. An id the trace has no Alloc for
// (damage, or a block allocated before recording started) gets no entry.
class AllocStacksBuilder {
 public:
  AllocStacksBuilder(const format::TraceInfo& info, std::span<const format::AllocId> wanted);
  void add(const format::Event& event);
  // `error`: the reader's, if it stopped at damage.
  AllocStacks finish(std::optional<Error> error, reader::SymbolTable symbols) &&;

 private:
  bool wanted(uint64_t id);

  std::vector<uint64_t> ids_;  // sorted, unique
  size_t cursor_ = 0;
  OverviewBuilder overview_;
  AllocStacks out_;
};

// The builder over every event of `reader`.
AllocStacks read_alloc_stacks(reader::Reader& reader, std::span<const format::AllocId> wanted);

}  // namespace memloupe::analysis
