#include "retention/node_graph.h"

namespace memloupe::retention {
namespace {

// Counting sort of (from, to, interior) triples into `adj`, keyed by `from`.
// Within one vertex the neighbours keep the order the edges came in.
struct RawEdge {
  uint32_t from;
  uint32_t to;
  uint8_t interior;
};

Adjacency compress(uint32_t vertex_count, const std::vector<RawEdge>& edges, bool reversed) {
  Adjacency adj;
  adj.begin.assign(static_cast<size_t>(vertex_count) + 1, 0);
  for (const RawEdge& e : edges) ++adj.begin[(reversed ? e.to : e.from) + 1];
  for (uint32_t v = 0; v < vertex_count; ++v) adj.begin[v + 1] += adj.begin[v];
  adj.to.resize(edges.size());
  adj.interior.resize(edges.size());
  std::vector<uint64_t> fill(adj.begin.begin(), adj.begin.end() - 1);
  for (const RawEdge& e : edges) {
    uint64_t& slot = fill[reversed ? e.to : e.from];
    adj.to[slot] = reversed ? e.from : e.to;
    adj.interior[slot] = e.interior;
    ++slot;
  }
  return adj;
}

}  // namespace

NodeGraph build_node_graph(const HeapSnapshot& snapshot) {
  NodeGraph g;
  g.roots = static_cast<uint32_t>(snapshot.roots.size());
  g.blocks = static_cast<uint32_t>(snapshot.blocks.size());
  const uint32_t n = g.vertex_count();

  std::vector<RawEdge> edges;
  edges.reserve(snapshot.edges.size() + g.roots);
  for (uint32_t r = 0; r < g.roots; ++r) edges.push_back({kSuperRoot, g.vertex_of_root(r), 0});
  for (const Edge& e : snapshot.edges) {
    if (e.from >= snapshot.node_count() || e.to >= g.blocks) {
      ++g.dropped_edges;
      continue;
    }
    edges.push_back({1 + e.from, g.vertex_of_block(e.to), static_cast<uint8_t>(e.interior)});
  }
  g.succ = compress(n, edges, false);
  g.pred = compress(n, edges, true);
  return g;
}

}  // namespace memloupe::retention
