#include "report/html_data.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "analysis/frame_names.h"
#include "report/frame_names.h"
#include "report/html_json.h"

namespace memloupe::report {

namespace {

// The measures a node is ranked by (shares of the whole).
constexpr size_t kRankMetrics = 4;
std::array<double, kRankMetrics> rank_values(const SiteValues& v) {
  return {v.allocated.bytes, v.allocated.objects, v.peak.bytes, v.leaked.bytes};
}

// What nodes and sites are ranked by: the largest share they have of any
// rank metric's whole.
double largest_share(const std::array<double, kRankMetrics>& v, const std::array<double, kRankMetrics>& whole) {
  double best = 0;
  for (size_t m = 0; m < kRankMetrics; ++m) {
    if (whole[m] > 0) best = std::max(best, v[m] / whole[m]);
  }
  return best;
}

struct TrieNode {
  uint32_t parent = 0;
  uint32_t depth = 0;
  std::string name;
  std::string short_name;  // the page's label (short_function_name); `name` is its tooltip
  std::string where;  // "file:line" of the first frame seen here
  bool library = false;  // analysis::is_library_frame of that frame
  std::unordered_map<std::string, uint32_t> children;
  std::array<double, kRankMetrics> total{};
};

struct NamedFrame {
  std::string name;
  std::string short_name;
  std::string where;
  bool library;
};

std::vector<NamedFrame> frames_root_first(const Profile& profile, const Site& site, size_t max_name) {
  std::vector<NamedFrame> out;
  for (auto it = site.stack.rbegin(); it != site.stack.rend(); ++it) {
    const Location& loc = profile.location(*it);
    const std::string_view module = loc.mapping ? std::string_view(profile.mappings[loc.mapping->value].path) : "";
    if (loc.frames.empty()) {
      const std::string name = frame_name(profile, loc, nullptr);
      out.push_back({cut(name, max_name), cut(name, max_name), "", analysis::is_library_frame("", module, false)});
    }
    for (auto f = loc.frames.rbegin(); f != loc.frames.rend(); ++f) {
      std::string where = f->file.empty() ? "" : f->file + ":" + std::to_string(f->line);
      const std::string name = frame_name(profile, loc, &*f);
      out.push_back({cut(name, max_name), cut(short_function_name(name), max_name), cut(where, max_name),
                     analysis::is_library_frame(f->file, module, !f->function.empty())});
    }
  }
  return out;
}

// How the site table names a site: its own frame (see below).
struct SiteLabel {
  std::string name;
  std::string short_name;
  std::string where;
  std::string innermost;  // the innermost frame's short name, when it is not the own frame
  std::string caller;     // the own frame's caller's short name
  uint32_t own_node = 0;  // the own frame's trie node (0: the root, no frames)
};

// One of the page's site entries: a site, or the sites merged at a page node.
struct Entry {
  uint32_t node;           // page node
  uint32_t focus;          // page node the flame graph focuses on for it
  const SiteLabel* label;  // null: merged sites
  uint32_t merged;         // sites' rows merged here (1 for a row of its own)
  SiteValues values;
  std::map<uint32_t, Bucket> buckets;
};

void add_values(SiteValues& a, const SiteValues& b) {
  a.allocated += b.allocated;
  a.live += b.live;
  a.peak += b.peak;
  a.leaked += b.leaked;
}

void add_bucket(std::map<uint32_t, Bucket>& buckets, const Bucket& b) {
  Bucket& into = buckets[b.index];
  into.index = b.index;
  into.allocated += b.allocated;
  into.freed += b.freed;
  into.leaked += b.leaked;
}

void write_curve(JsonWriter& json, const std::vector<HeapPoint>& points, const Profile& profile,
                 size_t max_points) {
  json.begin_array();
  if (points.size() <= max_points) {
    for (const HeapPoint& p : points) json.integer(p.time_ns).number(p.bytes);
    return void(json.end_array());
  }
  // One point per time slot: the highest, so the peak stays visible.
  uint64_t span = std::max<uint64_t>(profile.duration_ns, points.back().time_ns) + 1;
  size_t slot = SIZE_MAX;
  const HeapPoint* best = nullptr;
  auto flush = [&] {
    if (best) json.integer(best->time_ns).number(best->bytes);
  };
  for (const HeapPoint& p : points) {
    size_t s = static_cast<size_t>(static_cast<double>(p.time_ns) / static_cast<double>(span) *
                                   static_cast<double>(max_points));
    if (s != slot) {
      flush();
      slot = s;
      best = &p;
    } else if (p.bytes > best->bytes) {
      best = &p;
    }
  }
  flush();
  // The last point too, so the curve follows the run to its end (the max of
  // the last slot can be earlier in it).
  if (best != &points.back()) json.integer(points.back().time_ns).number(points.back().bytes);
  json.end_array();
}

void write_info(JsonWriter& json, const Profile& profile, const HtmlLimits& limits) {
  const format::TraceInfo& info = profile.info;
  std::string argv;
  for (const std::string& a : info.argv) argv += (argv.empty() ? "" : " ") + a;
  json.key("info").begin_object();
  json.key("executable").string(cut(info.executable, limits.max_name_bytes * 4));
  json.key("argv").string(cut(argv, limits.max_name_bytes * 4));
  json.key("pid").integer(info.pid);
  json.key("host").string(cut(info.host, limits.max_name_bytes));
  json.key("mode").string(info.mode == format::Mode::All ? "all" : "sampled");
  json.key("bytes_per_sample").integer(info.bytes_per_sample);
  json.key("start_wall_ns").integer(info.start_wall_ns);
  json.key("source_format").string(cut(info.source_format, limits.max_name_bytes));
  json.key("duration_ns").integer(profile.duration_ns);
  json.key("events").integer(profile.events);
  json.key("sites").integer(profile.sites.size());
  json.end_object();
}

// The site entries. A site of the table is a distinct chain of frame names
// (a trie node where sites end: the text views' sites, which group the call
// tree by function), so the backtraces that differ only in return addresses
// make one row. Every row is its own entry, largest first, while the budget
// lasts; the rest merge into one entry per page node. Per site: its trie node,
// its page node, the page node to focus on, its label; `whole`: the root's
// totals of the rank metrics.
std::vector<Entry> site_entries(const Profile& profile, const HtmlLimits& limits, bool sampled,
                                const std::vector<uint32_t>& site_node, const std::vector<uint32_t>& site_dest,
                                const std::vector<uint32_t>& focus, const std::vector<SiteLabel>& site_label,
                                const std::array<double, kRankMetrics>& whole) {
  auto merge_into = [](Entry& e, const Site& site) {
    add_values(e.values, site.values);
    for (const Bucket& b : site.buckets) add_bucket(e.buckets, b);
  };
  std::vector<Entry> rows;
  std::unordered_map<uint32_t, size_t> row_of_node;  // trie node -> row
  for (size_t s = 0; s < profile.sites.size(); ++s) {
    auto [it, inserted] = row_of_node.try_emplace(site_node[s], rows.size());
    if (inserted) rows.push_back({site_dest[s], focus[s], &site_label[s], 1, {}, {}});
    merge_into(rows[it->second], profile.sites[s]);
  }
  std::vector<std::pair<double, size_t>> by_size;
  for (size_t r = 0; r < rows.size(); ++r) by_size.emplace_back(largest_share(rank_values(rows[r].values), whole), r);
  std::stable_sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Entry> entries;
  std::map<uint32_t, size_t> rest_of;  // page node -> its merged entry
  size_t buckets_left = limits.max_site_buckets;
  const size_t bucket_cost = sampled ? 2 : 1;
  for (const auto& [score, r] : by_size) {
    Entry& row = rows[r];
    const size_t cost = row.buckets.size() * bucket_cost;
    if (entries.size() < limits.max_site_rows && cost <= buckets_left) {
      buckets_left -= cost;
      entries.push_back(std::move(row));
      continue;
    }
    auto [it, inserted] = rest_of.try_emplace(row.node, 0);
    if (inserted) {
      it->second = entries.size();
      entries.push_back({row.node, row.node, nullptr, 0, {}, {}});
    }
    Entry& rest = entries[it->second];
    rest.merged += row.merged;
    add_values(rest.values, row.values);
    for (const auto& [index, b] : row.buckets) add_bucket(rest.buckets, b);
  }
  return entries;
}

}  // namespace

std::string html_data_json(const Profile& profile, const HtmlLimits& limits) {
  // 1. The tree of frames, with each node's totals.
  std::vector<TrieNode> trie(1);
  trie[0].name = trie[0].short_name = "all";
  std::vector<uint32_t> site_node(profile.sites.size());
  std::vector<SiteLabel> site_label(profile.sites.size());
  for (size_t s = 0; s < profile.sites.size(); ++s) {
    const Site& site = profile.sites[s];
    auto values = rank_values(site.values);
    uint32_t node = 0;
    for (size_t m = 0; m < kRankMetrics; ++m) trie[0].total[m] += values[m];
    std::vector<NamedFrame> frames = frames_root_first(profile, site, limits.max_name_bytes);
    // The site table names a site by its innermost frame outside library code
    // (analysis::is_library_frame: the text views' rule), or its innermost frame.
    size_t own = frames.empty() ? 0 : frames.size() - 1;
    for (size_t i = frames.size(); i-- > 0;) {
      if (!frames[i].library) {
        own = i;
        break;
      }
    }
    if (!frames.empty()) site_label[s] = {frames[own].name, frames[own].short_name, frames[own].where,
                                          own + 1 == frames.size() ? "" : frames.back().short_name,
                                          own == 0 ? "" : frames[own - 1].short_name, 0};
    for (size_t i = 0; i < frames.size(); ++i) {
      NamedFrame& f = frames[i];
      auto [it, inserted] = trie[node].children.try_emplace(f.name, static_cast<uint32_t>(trie.size()));
      uint32_t next = it->second;  // read now: push_back below moves the maps
      if (inserted) {
        TrieNode child;
        child.parent = node;
        child.depth = trie[node].depth + 1;
        child.name = std::move(f.name);
        child.short_name = std::move(f.short_name);
        child.where = std::move(f.where);
        child.library = f.library;
        trie.push_back(std::move(child));
      }
      node = next;
      for (size_t m = 0; m < kRankMetrics; ++m) trie[node].total[m] += values[m];
      if (i == own) site_label[s].own_node = node;
    }
    site_node[s] = node;
  }

  // 2. Keep the nodes with the largest share of any metric. A node's totals
  // include its children's, so its score is at least any child's; breaking ties
  // by depth keeps the kept set closed under "parent of".
  auto score = [&](const TrieNode& n) { return largest_share(n.total, trie[0].total); };
  std::vector<uint32_t> order(trie.size() - 1);
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i + 1;
  std::vector<double> scores(trie.size());
  for (size_t i = 0; i < trie.size(); ++i) scores[i] = score(trie[i]);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return trie[a].depth < trie[b].depth;
  });
  if (order.size() > limits.max_kept_nodes) order.resize(limits.max_kept_nodes);
  std::sort(order.begin(), order.end());  // creation order: parents before children

  std::vector<int64_t> page_id(trie.size(), -1);
  page_id[0] = 0;
  std::vector<uint32_t> page_nodes = {0};
  for (uint32_t i : order) {
    page_id[i] = static_cast<int64_t>(page_nodes.size());
    page_nodes.push_back(i);
  }
  struct PageNode {
    uint32_t parent;
    std::string name;
    std::string short_name;
    std::string where;
    bool other;
    bool library;
  };
  std::vector<PageNode> nodes;
  for (uint32_t i : page_nodes) {
    const TrieNode& t = trie[i];
    nodes.push_back({i == 0 ? 0 : static_cast<uint32_t>(page_id[t.parent]), t.name, t.short_name, t.where, false, t.library});
  }

  // 3. Each site lands on its own node, or on an "[other]" child of its deepest
  // kept ancestor.
  std::map<uint32_t, uint32_t> other_of;  // kept page node -> its "[other]" page node
  std::vector<uint32_t> site_dest(profile.sites.size());
  auto kept_ancestor = [&](uint32_t node) {
    while (page_id[node] < 0) node = trie[node].parent;
    return static_cast<uint32_t>(page_id[node]);
  };
  for (size_t s = 0; s < profile.sites.size(); ++s) {
    uint32_t node = site_node[s];
    if (page_id[node] >= 0) {
      site_dest[s] = static_cast<uint32_t>(page_id[node]);
      continue;
    }
    uint32_t kept = kept_ancestor(node);
    auto [it, inserted] = other_of.try_emplace(kept, static_cast<uint32_t>(nodes.size()));
    if (inserted) nodes.push_back({kept, "[other]", "[other]", "", true, true});
    site_dest[s] = it->second;
  }

  const bool sampled = profile.info.mode != format::Mode::All;
  std::vector<uint32_t> focus(profile.sites.size());
  for (size_t s = 0; s < focus.size(); ++s) focus[s] = kept_ancestor(site_label[s].own_node);
  std::vector<Entry> entries =
      site_entries(profile, limits, sampled, site_node, site_dest, focus, site_label, trie[0].total);

  // The types table: each type's objects and bytes, and its stacks as the
  // page nodes its sites landed on (largest first, at most kTypeStacks).
  struct TypeRow {
    Amount allocated;  // objects: of the type (elements for buffers)
    std::map<uint32_t, Amount> stacks;
    // sizeof(T) when every site makes buffers of T (the elements' interval is
    // then the bytes' divided by it), 0 when none does (blocks), -1 when mixed.
    int64_t element_size = -2;  // -2: no site yet
  };
  std::map<std::string, TypeRow> types;
  for (size_t s = 0; s < profile.sites.size(); ++s) {
    const Site& site = profile.sites[s];
    if (site.type.empty() || site.values.allocated.bytes <= 0) continue;
    Amount a = site.values.allocated;
    if (site.element_size != 0) a.objects = a.bytes / static_cast<double>(site.element_size);
    TypeRow& row = types[site.type];
    const auto element = static_cast<int64_t>(site.element_size);
    row.element_size = row.element_size == -2 || row.element_size == element ? element : -1;
    row.allocated += a;
    row.stacks[site_dest[s]] += a;
  }

  // 4. The JSON.
  JsonWriter json;
  json.begin_object();
  write_info(json, profile, limits);
  json.key("bucket_ns").integer(profile.bucket_ns);
  json.key("buckets").integer(profile.bucket_count);
  json.key("selection").begin_array()
      .integer(profile.selection_begin_ns)
      .integer(profile.selection_end_ns).end_array();
  json.key("nodes_total").integer(trie.size());

  std::vector<std::string> strings;
  std::unordered_map<std::string, size_t> string_index;
  auto intern = [&](const std::string& s) {
    auto [it, inserted] = string_index.try_emplace(s, strings.size());
    if (inserted) strings.push_back(s);
    return it->second;
  };
  // [parent, name, short name, where, flags] per node; flags: 1 = "[other]",
  // 2 = library code (analysis::is_library_frame: the tables' rule for naming a site).
  json.key("nodes").begin_array();
  for (const PageNode& n : nodes) {
    json.integer(n.parent).integer(intern(n.name)).integer(intern(n.short_name)).integer(intern(n.where));
    json.integer((n.other ? 1 : 0) | (n.library ? 2 : 0));
  }
  json.end_array();
  // Per entry: n = page node, f = the page node to focus (its own frame's, or
  // that frame's deepest kept ancestor), l = [name, short name, where, innermost
  // frame's short name when another, caller's short name] of its own frame, or m = how many merged
  // sites it holds; t = totals, b = buckets; from a sampled trace c and bc: the
  // sampled blocks and the variance of each amount of t and b.
  json.key("sites").begin_array();
  for (const Entry& e : entries) {
    const SiteValues& v = e.values;
    json.begin_object().key("n").integer(e.node).key("f").integer(e.focus);
    if (e.label) {
      json.key("l").begin_array().integer(intern(e.label->name)).integer(intern(e.label->short_name))
          .integer(intern(e.label->where)).integer(intern(e.label->innermost)).integer(intern(e.label->caller))
          .end_array();
    } else {
      json.key("m").integer(e.merged);
    }
    const Amount totals[] = {v.allocated, v.live, v.peak, v.leaked};
    json.key("t").begin_array();
    for (const Amount& a : totals) json.number(a.bytes).number(a.objects);
    json.end_array().key("b").begin_array();
    for (const auto& [index, b] : e.buckets) {
      json.integer(index);
      for (const Amount& a : {b.allocated, b.freed, b.leaked}) json.number(a.bytes).number(a.objects);
    }
    json.end_array();
    if (sampled) {
      json.key("c").begin_array();
      for (const Amount& a : totals) json.number(a.blocks_seen).number(a.objects_var);
      json.end_array().key("bc").begin_array();
      for (const auto& [index, b] : e.buckets) {
        for (const Amount& a : {b.allocated, b.freed, b.leaked}) json.number(a.blocks_seen).number(a.objects_var);
      }
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();

  // [name, objects, bytes, [node, objects, bytes, ...]] per type, most objects
  // first; sampled: then blocks seen, variance, element size (see TypeRow).
  std::vector<std::pair<const std::string*, const TypeRow*>> type_order;
  for (const auto& [name, row] : types) type_order.emplace_back(&name, &row);
  std::stable_sort(type_order.begin(), type_order.end(),
                   [](const auto& a, const auto& b) { return a.second->allocated.objects > b.second->allocated.objects; });
  if (type_order.size() > limits.max_types) type_order.resize(limits.max_types);
  json.key("types").begin_array();
  for (const auto& [name, row] : type_order) {
    json.begin_array().string(cut(*name, limits.max_name_bytes)).number(row->allocated.objects).number(row->allocated.bytes);
    std::vector<std::pair<uint32_t, Amount>> stacks(row->stacks.begin(), row->stacks.end());
    std::stable_sort(stacks.begin(), stacks.end(),
                     [](const auto& a, const auto& b) { return a.second.objects > b.second.objects; });
    if (stacks.size() > limits.max_type_stacks) stacks.resize(limits.max_type_stacks);
    json.begin_array();
    for (const auto& [node, a] : stacks) json.integer(node).number(a.objects).number(a.bytes);
    json.end_array();
    if (sampled) {
      // For the intervals: blocks seen, variance, and how objects were counted.
      json.number(row->allocated.blocks_seen).number(row->allocated.objects_var);
      if (row->element_size < 0) json.number(-1); else json.integer(static_cast<uint64_t>(row->element_size));
    }
    json.end_array();
  }
  json.end_array();

  json.key("heap");
  write_curve(json, profile.heap, profile, limits.max_curve_points);
  json.key("rss");
  write_curve(json, profile.rss, profile, limits.max_curve_points);
  json.key("mapped");
  write_curve(json, profile.mapped, profile, limits.max_curve_points);
  json.key("peak").begin_array().integer(profile.peak.time_ns).number(profile.peak.bytes).end_array();
  // [objects, sampled blocks, variance] of the blocks live at the peak.
  json.key("peak_live").begin_array().number(profile.peak_live.objects).number(profile.peak_live.blocks_seen)
      .number(profile.peak_live.objects_var).end_array();
  json.key("markers").begin_array();
  size_t markers = std::min(profile.markers.size(), limits.max_markers);
  for (size_t i = 0; i < markers; ++i) {
    const TimeMark& m = profile.markers[i * profile.markers.size() / markers];  // evenly spread
    json.integer(m.time_ns).string(cut(m.name, limits.max_name_bytes));
  }
  json.end_array();
  json.key("strings").begin_array();
  for (const std::string& text : strings) json.string(text);
  json.end_array();
  json.end_object();
  return json.take();
}

}  // namespace memloupe::report
