// Builds the CallTree: each stack of the Aggregate becomes a path from the root
// (outermost frame) to a leaf (innermost), expanded into source frames.
//
//   root ─ main ─ run ─ parse ─ std::vector::push_back   (inlined into parse)
//                   └─ load  ─ make_buffer
//
// Nodes are created parent before child, so every child's index exceeds its
// parent's: one backward sweep turns self metrics into totals.
#include <string>
#include <unordered_map>

#include "analysis/frame_names.h"
#include "analysis/model.h"

namespace memloupe::analysis {

class CallTreeBuilder {
 public:
  CallTreeBuilder(CallTree& tree, const reader::SymbolTable& symbols,
                  const std::vector<ModuleInfo>& modules, const Query& query)
      : tree_(tree), symbols_(symbols), modules_(modules), query_(query) {}

  NodeId add_stack(std::span<const uint64_t> frames) {
    NodeId node = CallTree::kRoot;
    for (size_t i = frames.size(); i-- > 0;) {
      for (FrameId f : frames_of(frames[i])) node = child(node, f);
    }
    return node;
  }

  void finish() {
    std::vector<Node>& nodes = tree_.nodes_;
    for (Node& n : nodes) n.total = n.self;
    for (size_t i = nodes.size(); i-- > 1;) nodes[nodes[i].parent.value].total += nodes[i].total;
  }

 private:
  // The view frames of one address, outermost first, hidden ones dropped.
  const std::vector<FrameId>& frames_of(uint64_t address) {
    auto [it, is_new] = by_address_.try_emplace(address);
    if (!is_new) return it->second;
    std::vector<Frame> expanded = expand_address(address, symbols_, modules_);
    if (query_.grouping == Grouping::Function) collapse_self_inlining(expanded);
    if (query_.grouping == Grouping::Address) {
      // One frame per address, named by its innermost function.
      Frame f = std::move(expanded.back());
      f.inlined = false;
      expanded.assign(1, std::move(f));
    }
    for (Frame& f : expanded) {
      if (contains_any(f.function, query_.filter.hide)) continue;
      it->second.push_back(intern(std::move(f)));
    }
    return it->second;
  }

  // GCC's DWARF can nest a function's inlined copy directly in another copy of
  // itself for one source call (addr2line -i shows std::_Vector_base::_M_allocate
  // at stl_vector.h:378, then again at :375, its opening line). By function the
  // two are one frame, or the views would print the function twice under one
  // location. The innermost copy is kept: its line is where the call below it
  // is made; it is inlined only if the outer copy was.
  static void collapse_self_inlining(std::vector<Frame>& chain) {  // outermost first
    size_t kept = 0;
    for (size_t i = 0; i < chain.size(); ++i) {
      if (kept > 0 && chain[kept - 1].function == chain[i].function) {
        const bool inlined = chain[kept - 1].inlined;
        chain[kept - 1] = std::move(chain[i]);
        chain[kept - 1].inlined = inlined;
        continue;
      }
      if (kept != i) chain[kept] = std::move(chain[i]);
      ++kept;
    }
    chain.resize(kept);
  }

  FrameId intern(Frame f) {
    switch (query_.grouping) {
      case Grouping::Function: f.key = f.function; break;
      case Grouping::Line: f.key = f.function + '\t' + f.file + ':' + std::to_string(f.line); break;
      case Grouping::Address: f.key = unknown_frame_name(f.address, modules_); break;
    }
    auto [it, is_new] = by_key_.try_emplace(f.key, FrameId{static_cast<uint32_t>(tree_.frames_.size())});
    if (is_new) tree_.frames_.push_back(std::move(f));
    return it->second;
  }

  NodeId child(NodeId parent, FrameId frame) {
    const uint64_t key = (uint64_t{parent.value} << 32) | frame.value;
    auto [it, is_new] = children_.try_emplace(key, NodeId{static_cast<uint32_t>(tree_.nodes_.size())});
    if (is_new) {
      Node n;
      n.parent = parent;
      n.frame = frame;
      n.depth = tree_.nodes_[parent.value].depth + 1;
      tree_.nodes_.push_back(std::move(n));
      tree_.nodes_[parent.value].children.push_back(it->second);
    }
    return it->second;
  }

  CallTree& tree_;
  const reader::SymbolTable& symbols_;
  const std::vector<ModuleInfo>& modules_;
  const Query& query_;
  std::unordered_map<uint64_t, std::vector<FrameId>> by_address_;
  std::unordered_map<std::string, FrameId> by_key_;
  std::unordered_map<uint64_t, NodeId> children_;
};

CallTree::CallTree() { nodes_.push_back(Node{kRoot, FrameId{0}, 0, {}, {}, {}}); }

std::vector<FrameId> CallTree::path(NodeId id) const {
  std::vector<FrameId> out;
  for (NodeId n = id; n.value != kRoot.value; n = nodes_[n.value].parent) out.push_back(nodes_[n.value].frame);
  return {out.rbegin(), out.rend()};
}

CallTree build_call_tree(const Aggregate& aggregate, const reader::SymbolTable& symbols,
                         const std::vector<ModuleInfo>& modules) {
  CallTree tree;
  CallTreeBuilder builder(tree, symbols, modules, aggregate.query);
  tree.stack_leaf_.reserve(aggregate.stacks.size());
  for (uint32_t id = 0; id < aggregate.stacks.size(); ++id) {
    const NodeId leaf = builder.add_stack(aggregate.frames(StackId{id}));
    tree.nodes_[leaf.value].self += aggregate.stacks[id].metrics;
    tree.stack_leaf_.push_back(leaf);
  }
  builder.finish();
  return tree;
}

}  // namespace memloupe::analysis
