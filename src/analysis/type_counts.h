// Per-type counts (`memloupe types`): the model's stacks grouped by the C++
// type their allocation site creates (the trace's types table, written by
// finalise: src/types/type_table.h), and for chosen types their most frequent
// call stacks.
//
// A stack's site is its innermost return address. Its blocks count as
//   - a typed site, one object per block:  objects = blocks;
//   - a typed buffer (T[]):                objects = bytes / sizeof(T) (elements);
//   - an untyped site of one block size:   "(unknown, N B)", objects = blocks;
//   - an untyped site of several sizes, or one finalise did not see:
//                                          "(unknown, mixed sizes)".
// Every figure is an estimate with its 95% interval from a sampled trace
// (elements: the bytes' interval divided by sizeof), exact from --all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "types/type_table.h"

namespace memloupe::analysis {

struct TypeCount {
  std::string type;
  bool known = false;
  uint64_t type_size = 0;            // sizeof(T); an unknown row's block size (0: mixed)
  types::TypeShape shape = types::TypeShape::Object;
  std::vector<types::TypeRule> rules;  // how its sites were typed (distinct, in rule order)
  Metrics metrics;                   // summed over its stacks
  std::vector<StackId> stacks;

  // Objects (elements for a buffer) under `m`: estimate and interval.
  Estimate objects(Metric m, const Estimator& estimator) const;
};

// The type of stack `id`'s site, or null: not in the table, untyped, or
// contradicted by the stack's counts (type_counts.cc).
const types::SiteType* stack_type(const Aggregate& aggregate, StackId id, const types::TypeTable& table);

// The row a site's blocks count under: its type's name; "(unknown, N B)" for
// an untyped site whose blocks all had N bytes; "(unknown, mixed sizes)" for
// null (a site the table does not type, or blocks that contradict it).
std::string type_row_name(const types::SiteType* site);

enum class TypeOrder : uint8_t { Count, Bytes, Live };

// Every type with selected allocations, sorted largest first by `order`
// (Count: allocated objects; Bytes: allocated bytes; Live: bytes live at the end).
std::vector<TypeCount> count_types(const Model& model, const types::TypeTable& table, TypeOrder order);

struct TypeStack {
  std::vector<FrameId> frames;  // innermost first, at most `depth`
  Count allocated;              // of the type's objects' blocks
  Estimate objects;
  Estimate bytes;
};
// The stacks that created `type`, cut to their innermost `depth` frames
// (0: whole) of the model's call tree (its grouping and --hide), merged when
// equal after the cut, those with fewer than `min_count` objects dropped, most
// objects first.
std::vector<TypeStack> type_stacks(const Model& model, const TypeCount& type, uint32_t depth, double min_count);

}  // namespace memloupe::analysis
