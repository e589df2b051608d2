// `memloupe retention --tree` and `--paths`: the dominator tree under each
// root, and the shortest chains of pointers from roots to chosen blocks.
#include <algorithm>
#include <charconv>

#include "analysis/frame_names.h"
#include "report/text_format.h"
#include "report/text_retention.h"
#include "retention/paths.h"

namespace memloupe::report {

using retention::Amount;

namespace {

std::string vertex_label(const SnapshotReport& r, uint32_t v) {
  const retention::NodeGraph& g = r.retention.graph;
  if (g.is_root(v)) {
    const retention::Root& root = r.snapshot.roots[g.root_of(v)];
    return r.names.root_label(root) + " [" + root_kind_name(root.kind) + "]";
  }
  const uint32_t b = g.block_of(v);
  return block_label(r.snapshot, b) + "  " + r.names.site_label(r.names.site_of(b));
}

}  // namespace

std::string render_retention_tree(const SnapshotReport& r, const RetentionOptions& o) {
  const retention::Retention& ret = r.retention;
  std::string out = "Dominator tree (retained bytes: what clearing the pointer would free)\n";
  // The super-root's children are the roots and the shared blocks; a root that
  // retains nothing is left out.
  std::vector<uint32_t> tops;
  for (uint32_t v : ret.children(retention::kSuperRoot)) {
    if (ret.retained[v].blocks != 0) tops.push_back(v);
  }
  const size_t limit = o.roots == 0 ? tops.size() : std::min(tops.size(), o.roots);

  // Depth-first with an explicit stack (no recursion on deep trees). An entry
  // is a vertex with the prefixes for its line and its children's, or (vertex
  // kNoVertex) a finished "… N more" line.
  struct Entry {
    uint32_t vertex;
    size_t depth;
    std::string prefix;
    std::string child_prefix;
  };
  const size_t width = o.width ? o.width : SIZE_MAX;
  for (size_t i = 0; i < limit; ++i) {
    std::vector<Entry> stack{{tops[i], 0, "", ""}};
    out += '\n';
    while (!stack.empty()) {
      Entry e = std::move(stack.back());
      stack.pop_back();
      if (e.vertex == retention::kNoVertex) {
        out += truncate_display(e.prefix, width) + '\n';
        continue;
      }
      std::string text = vertex_label(r, e.vertex) + "  retains " + amount_text(ret.retained[e.vertex]);
      if (e.depth == 0 && ret.graph.is_block(e.vertex)) text = "(shared between roots) " + text;
      out += truncate_display(e.prefix + text, width) + '\n';
      if (e.depth >= o.depth) continue;
      const auto children = ret.children(e.vertex);
      const size_t shown = std::min(children.size(), o.breadth);
      // Pushed in reverse: the largest child prints first, the "more" line last.
      if (shown < children.size()) {
        const Amount rest = ret.retained_sum(children.subspan(shown));
        stack.push_back({retention::kNoVertex, 0,
                         e.child_prefix + "└─ … " + human_count(static_cast<double>(children.size() - shown)) +
                             " more: " + amount_text(rest),
                         ""});
      }
      for (size_t c = shown; c-- > 0;) {
        const bool last = c + 1 == children.size();
        stack.push_back({children[c], e.depth + 1, e.child_prefix + (last ? "└─ " : "├─ "),
                         e.child_prefix + (last ? "   " : "│  ")});
      }
    }
  }
  if (limit < tops.size()) {
    out += "\n… " + human_count(static_cast<double>(tops.size() - limit)) + " more roots (-n 0 for all)\n";
  }
  return out;
}

PathTarget find_path_target(const SnapshotReport& r, const std::string& spec) {
  PathTarget t;
  const retention::HeapSnapshot& s = r.snapshot;
  uint64_t number = 0;
  if (spec.size() > 2 && spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X')) {
    const char* end = spec.data() + spec.size();
    if (std::from_chars(spec.data() + 2, end, number, 16).ptr == end) {
      t.description = "the block at " + spec;
      if (auto b = retention::block_at(s, number)) t.blocks.push_back(*b);
      return t;
    }
  }
  const char* end = spec.data() + spec.size();
  if (!spec.empty() && std::from_chars(spec.data(), end, number).ptr == end) {
    t.description = "allocation " + spec;
    for (uint32_t b = 0; b < s.blocks.size(); ++b) {
      if (s.blocks[b].alloc.value == number) t.blocks.push_back(b);
    }
    return t;
  }
  t.description = "the blocks allocated under \"" + spec + "\"";
  const std::vector<std::string> needles{spec};
  std::vector<bool> matches(r.names.sites().size(), false);
  for (size_t i = 0; i < matches.size(); ++i) {
    for (const analysis::Frame& f : r.names.sites()[i].frames) {
      if (analysis::contains_any(f.function, needles)) matches[i] = true;
    }
  }
  for (uint32_t b = 0; b < s.blocks.size(); ++b) {
    const uint32_t site = r.names.site_of(b);
    if (site != RetentionNames::kUnknownSite && matches[site]) t.blocks.push_back(b);
  }
  return t;
}

std::string render_retention_paths(const SnapshotReport& r, const PathTarget& target,
                                   const RetentionOptions& o) {
  if (target.blocks.empty()) return "No live block matches " + target.description + ".\n";
  Amount total;
  for (uint32_t b : target.blocks) total.add(r.snapshot.blocks[b].size);
  std::string out = "Who holds " + target.description + " (" + amount_text(total) + "):\n";
  const std::vector<retention::RootPath> paths = retention::shortest_paths(r.retention.graph, target.blocks, o.paths);
  if (paths.empty()) {
    // Leaked: say how memcheck would count them.
    retention::LeakSummary kinds;
    for (uint32_t b : target.blocks) kinds[r.retention.leaks.of_block[b]].add(r.snapshot.blocks[b].size);
    out += "  No root reaches it: definitely lost " + amount_text(kinds.definitely_lost) + ", indirectly lost " +
           amount_text(kinds.indirectly_lost) + ".\n";
    return out;
  }
  const retention::NodeGraph& g = r.retention.graph;
  for (size_t i = 0; i < paths.size(); ++i) {
    out += "  " + std::to_string(i + 1) + ". " + vertex_label(r, g.vertex_of_root(paths[i].root)) + '\n';
    for (uint32_t b : paths[i].blocks) out += "       → " + vertex_label(r, g.vertex_of_block(b)) + '\n';
  }
  return out;
}

}  // namespace memloupe::report
