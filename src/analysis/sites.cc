#include "analysis/sites.h"

#include <algorithm>
#include <map>

namespace memloupe::analysis {
namespace {

// Nodes that are the end of some stack (non-empty self), in index order.
template <class F>
void for_each_leaf(const CallTree& tree, F&& f) {
  for (uint32_t i = 0; i < tree.node_count(); ++i) {
    const Node& n = tree.node(NodeId{i});
    if (!n.self[Metric::Allocated].empty()) f(NodeId{i}, n);
  }
}

std::vector<Neighbour> to_list(std::map<std::optional<uint32_t>, Metrics>& by_frame) {
  std::vector<Neighbour> out;
  for (auto& [frame, metrics] : by_frame) {
    out.push_back(Neighbour{frame ? std::optional<FrameId>(FrameId{*frame}) : std::nullopt, metrics});
  }
  return out;
}

}  // namespace

std::vector<Site> collect_sites(const CallTree& tree, uint32_t depth) {
  std::map<std::vector<uint32_t>, size_t> index;
  std::vector<Site> sites;
  for_each_leaf(tree, [&](NodeId id, const Node& n) {
    std::vector<uint32_t> key;
    for (NodeId at = id; at.value != CallTree::kRoot.value && (depth == 0 || key.size() < depth);
         at = tree.node(at).parent) {
      key.push_back(tree.node(at).frame.value);
    }
    auto [it, is_new] = index.try_emplace(key, sites.size());
    if (is_new) {
      Site s;
      for (uint32_t f : key) s.frames.push_back(FrameId{f});
      sites.push_back(std::move(s));
    }
    sites[it->second].metrics += n.self;
  });
  return sites;
}

double sort_value(const Metrics& m, SortKey key, const Estimator& estimator) {
  const Count& c = m[key.metric];
  return key.by_objects ? estimator.objects_value(c) : estimator.bytes_value(c);
}

void sort_sites(std::vector<Site>& sites, SortKey key, const Estimator& estimator) {
  std::stable_sort(sites.begin(), sites.end(), [&](const Site& a, const Site& b) {
    const double va = sort_value(a.metrics, key, estimator), vb = sort_value(b.metrics, key, estimator);
    if (va != vb) return va > vb;
    return a.frames.size() != b.frames.size() ? a.frames.size() < b.frames.size()
                                               : std::lexicographical_compare(
                                                     a.frames.begin(), a.frames.end(), b.frames.begin(),
                                                     b.frames.end(), [](FrameId x, FrameId y) { return x.value < y.value; });
  });
}

Neighbours neighbours_of(const CallTree& tree, std::string_view function) {
  Neighbours out;
  std::vector<bool> matches(tree.frame_count());
  for (uint32_t f = 0; f < tree.frame_count(); ++f) {
    matches[f] = tree.frame(FrameId{f}).function.find(function) != std::string::npos;
    if (matches[f]) out.matched.push_back(FrameId{f});
  }
  std::map<std::optional<uint32_t>, Metrics> callers, callees;
  for_each_leaf(tree, [&](NodeId id, const Node& n) {
    const std::vector<FrameId> path = tree.path(id);  // outermost first
    size_t first = path.size(), last = path.size();
    for (size_t i = 0; i < path.size(); ++i) {
      if (!matches[path[i].value]) continue;
      if (first == path.size()) first = i;
      last = i;
    }
    if (first == path.size()) return;
    callers[first == 0 ? std::nullopt : std::optional<uint32_t>(path[first - 1].value)] += n.self;
    callees[last + 1 == path.size() ? std::nullopt : std::optional<uint32_t>(path[last + 1].value)] += n.self;
    out.total += n.self;
  });
  out.callers = to_list(callers);
  out.callees = to_list(callees);
  return out;
}

}  // namespace memloupe::analysis
