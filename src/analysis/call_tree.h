// The views' call tree (call_tree.cc): an Aggregate's stacks expanded into
// frames (inlined frames included), grouped (by function by default), hidden
// frames dropped; root = outermost frame.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/aggregate.h"
#include "analysis/metrics.h"
#include "analysis/overview.h"
#include "reader/reader.h"

namespace memloupe::analysis {

// One frame as the views show it. Inlined frames are frames of their own.
struct Frame {
  std::string key;       // identity under the tree's Grouping; stable across traces
  std::string function;  // demangled; if unknown, "module+0xoffset" or "0xaddress"
  std::string file;      // empty if unknown; under Grouping::Function, the location
  uint32_t line = 0;     //   of the first address seen for the function
  uint32_t column = 0;
  uint64_t address = 0;  // a return address that produced this frame
  std::string module;    // path of the module holding `address`; empty if unknown
  bool symbolized = false;
  bool inlined = false;
};

struct Node {
  NodeId parent;            // the root is its own parent
  FrameId frame;            // meaningless for the root
  uint32_t depth = 0;       // 0 for the root
  std::vector<NodeId> children;
  Metrics self;             // blocks whose (view) stack ends here
  Metrics total;            // self + all descendants
};

class CallTree {
 public:
  static constexpr NodeId kRoot{0};
  CallTree();

  const Node& node(NodeId id) const { return nodes_[id.value]; }
  const Frame& frame(FrameId id) const { return frames_[id.value]; }
  size_t node_count() const { return nodes_.size(); }
  size_t frame_count() const { return frames_.size(); }
  // Frames from the root's child down to `id` (outermost first).
  std::vector<FrameId> path(NodeId id) const;
  // The leaf node each StackId of the Aggregate landed on (kRoot if every frame was hidden).
  NodeId leaf_of(StackId id) const { return stack_leaf_[id.value]; }

 private:
  friend class CallTreeBuilder;
  friend CallTree build_call_tree(const struct Aggregate&, const reader::SymbolTable&,
                                  const std::vector<ModuleInfo>&);
  std::vector<Node> nodes_;
  std::vector<Frame> frames_;
  std::vector<NodeId> stack_leaf_;
};

CallTree build_call_tree(const Aggregate& aggregate, const reader::SymbolTable& symbols,
                         const std::vector<ModuleInfo>& modules);

}  // namespace memloupe::analysis
