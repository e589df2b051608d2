// `memloupe retention`: roots by retained bytes, leak kinds, blocks by site.
#include "report/text_retention.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <utility>

#include "report/text_format.h"
#include "report/text_table.h"

namespace memloupe::report {

using retention::Amount;
using retention::LeakKind;

namespace {

constexpr TextTable::Align R = TextTable::Align::Right, L = TextTable::Align::Left;

// A table with these columns (name, alignment).
TextTable table(std::initializer_list<std::pair<const char*, TextTable::Align>> columns) {
  TextTable t;
  for (const auto& [name, align] : columns) t.add_column(name, align);
  return t;
}

Cell bytes_cell(uint64_t bytes) { return Cell{human_bytes(static_cast<double>(bytes)), {std::to_string(bytes)}}; }
Cell count_cell(uint64_t n) { return Cell{human_count(static_cast<double>(n)), {std::to_string(n)}}; }

std::string heading(const SnapshotReport& r) {
  const retention::HeapSnapshot& s = r.snapshot;
  Amount live;
  for (const retention::Block& b : s.blocks) live.add(b.size);
  std::string out = "Snapshot " + std::to_string(r.number) + " of " + std::to_string(r.count) + " \"" + s.label +
                    "\" at " + human_duration(s.time_ns) + (s.at_exit ? " (at exit)" : "") + ": " +
                    amount_text(live) + " live, " + human_count(static_cast<double>(s.roots.size())) + " roots\n";
  if (r.retention.graph.dropped_edges) {
    out += "  (" + human_count(static_cast<double>(r.retention.graph.dropped_edges)) +
           " edges pointed outside the snapshot and were ignored)\n";
  }
  return out;
}

// Roots with anything reachable, the largest retained first (then reachable,
// then root order, so the listing is stable).
std::vector<uint32_t> ranked_roots(const retention::Retention& ret) {
  std::vector<uint32_t> roots;
  for (uint32_t i = 0; i < ret.roots.size(); ++i) {
    if (ret.roots[i].reachable.blocks != 0) roots.push_back(i);
  }
  std::stable_sort(roots.begin(), roots.end(), [&](uint32_t a, uint32_t b) {
    const auto& x = ret.roots[a];
    const auto& y = ret.roots[b];
    if (x.retained.bytes != y.retained.bytes) return x.retained.bytes > y.retained.bytes;
    return x.reachable.bytes > y.reachable.bytes;
  });
  return roots;
}

std::string roots_section(const SnapshotReport& r, const RetentionOptions& o) {
  const retention::Retention& ret = r.retention;
  const retention::NodeGraph& g = ret.graph;
  const std::vector<uint32_t> roots = ranked_roots(ret);
  const Amount& all = ret.retained[retention::kSuperRoot];
  std::string out = "Reachable from the roots: " + amount_text(all) + "; retained by single roots " +
                    human_bytes(static_cast<double>(all.bytes - ret.shared.bytes)) + ", shared between roots " +
                    amount_text(ret.shared) + "\n";
  if (roots.empty()) return out + "No root holds a pointer to a live block.\n";

  TextTable t =
      table({{"#", R}, {"kind", L}, {"retained", R}, {"blocks", R}, {"reachable", R}, {"blocks", R}, {"root", L}});
  const size_t shown = o.roots == 0 ? roots.size() : std::min(roots.size(), o.roots);
  for (size_t i = 0; i < shown; ++i) {
    const retention::Root& root = r.snapshot.roots[roots[i]];
    const retention::RootRetention& rr = ret.roots[roots[i]];
    std::string label = r.names.root_label(root);
    const std::string where = r.names.root_where(root);
    if (!where.empty()) label += "  " + where;
    std::vector<std::string> notes;
    const auto children = ret.children(g.vertex_of_root(roots[i]));
    for (size_t c = 0; c < children.size() && c < o.blocks; ++c) {
      const uint32_t b = g.block_of(children[c]);
      notes.push_back("retains " + amount_text(ret.retained[children[c]]) + " through " +
                      block_label(r.snapshot, b) + "  " + r.names.site_label(r.names.site_of(b)));
    }
    if (children.size() > o.blocks && o.blocks > 0) {
      notes.push_back("… " + human_count(static_cast<double>(children.size() - o.blocks)) + " more blocks");
    }
    t.add_row({Cell{std::to_string(i + 1)}, Cell{root_kind_name(root.kind)}, bytes_cell(rr.retained.bytes),
               count_cell(rr.retained.blocks), bytes_cell(rr.reachable.bytes), count_cell(rr.reachable.blocks),
               Cell{label}},
              std::move(notes));
  }
  out += '\n' + t.render(o.width);
  if (shown < roots.size()) {
    out += "… " + human_count(static_cast<double>(roots.size() - shown)) + " more roots (-n 0 for all)\n";
  }
  const size_t idle = r.snapshot.roots.size() - roots.size();
  if (idle) out += human_count(static_cast<double>(idle)) + (idle == 1 ? " root reaches" : " roots reach") + " no block.\n";
  return out;
}

std::string leaks_section(const SnapshotReport& r) {
  const retention::LeakSummary& s = r.retention.leaks.summary;
  std::string out = "Leak kinds (as memcheck counts them):\n";
  for (LeakKind k : {LeakKind::DefinitelyLost, LeakKind::IndirectlyLost, LeakKind::PossiblyLost,
                     LeakKind::StillReachable}) {
    char line[64];
    std::snprintf(line, sizeof line, "  %-16s ", (std::string(retention::leak_kind_name(k)) + ":").c_str());
    out += line + amount_text(s[k]) + '\n';
  }
  return out;
}

std::string sites_section(const SnapshotReport& r, const RetentionOptions& o) {
  const std::vector<SiteRetention> sites = retention_by_site(r);
  TextTable t = table({{"#", R}, {"live", R}, {"blocks", R}, {"site", L}});
  for (size_t k = 0; k < sites.size() && (o.sites == 0 || k < o.sites); ++k) {
    const SiteRetention& s = sites[k];
    t.add_row({Cell{std::to_string(k + 1)}, bytes_cell(s.live.bytes), count_cell(s.live.blocks),
               Cell{r.names.site_label(s.site)}},
              r.names.site_callers(s.site, o.frames));
  }
  std::string out = "Live blocks by allocation site:\n" + t.render(o.width);

  // The kinds other than still reachable, one row per site and kind: definitely
  // lost first, then by bytes.
  struct Lost {
    LeakKind kind;
    const SiteRetention* site;
  };
  std::vector<Lost> rows;
  for (const SiteRetention& s : sites) {
    for (LeakKind k : {LeakKind::DefinitelyLost, LeakKind::IndirectlyLost, LeakKind::PossiblyLost}) {
      if (s.kinds[k].blocks) rows.push_back({k, &s});
    }
  }
  if (rows.empty()) return out;
  std::stable_sort(rows.begin(), rows.end(), [](const Lost& a, const Lost& b) {
    if (a.kind != b.kind) return a.kind > b.kind;
    return a.site->kinds[a.kind].bytes > b.site->kinds[b.kind].bytes;
  });
  TextTable l = table({{"#", R}, {"kind", L}, {"bytes", R}, {"blocks", R}, {"site", L}});
  for (size_t k = 0; k < rows.size() && (o.sites == 0 || k < o.sites); ++k) {
    const Amount& a = rows[k].site->kinds[rows[k].kind];
    l.add_row({Cell{std::to_string(k + 1)}, Cell{retention::leak_kind_name(rows[k].kind)}, bytes_cell(a.bytes),
               count_cell(a.blocks), Cell{r.names.site_label(rows[k].site->site)}},
              r.names.site_callers(rows[k].site->site, o.frames));
  }
  return out + "\nUnreachable and possibly lost blocks by allocation site:\n" + l.render(o.width);
}

std::string types_section(const SnapshotReport& r, const RetentionOptions& o) {
  const std::vector<TypeRetention> types = retention_by_type(r);
  TextTable t = table({{"#", R}, {"live", R}, {"blocks", R}, {"objects", R}, {"type", L}});
  for (size_t k = 0; k < types.size() && (o.sites == 0 || k < o.sites); ++k) {
    const TypeRetention& row = types[k];
    t.add_row({Cell{std::to_string(k + 1)}, bytes_cell(row.live.bytes), count_cell(row.live.blocks),
               count_cell(row.objects), Cell{r.names.types()[row.type].name}});
  }
  return "Live blocks by type (memloupe types):\n" + t.render(o.width);
}

}  // namespace

std::string block_label(const retention::HeapSnapshot& s, uint32_t b) {
  char buf[96];
  const retention::Block& block = s.blocks[b];
  std::snprintf(buf, sizeof buf, " at 0x%llx (alloc %llu)", static_cast<unsigned long long>(block.address),
                static_cast<unsigned long long>(block.alloc.value));
  return human_bytes(static_cast<double>(block.size)) + buf;
}

std::string amount_text(const Amount& a) {
  return human_bytes(static_cast<double>(a.bytes)) + " in " + human_count(static_cast<double>(a.blocks)) +
         (a.blocks == 1 ? " block" : " blocks");
}

std::vector<SiteRetention> retention_by_site(const SnapshotReport& r) {
  // Index sites().size() collects the blocks of unknown site.
  const size_t unknown = r.names.sites().size();
  std::vector<SiteRetention> all(unknown + 1);
  for (size_t i = 0; i < unknown; ++i) all[i].site = static_cast<uint32_t>(i);
  for (uint32_t b = 0; b < r.snapshot.blocks.size(); ++b) {
    const uint32_t site = r.names.site_of(b);
    SiteRetention& s = all[site == RetentionNames::kUnknownSite ? unknown : site];
    s.live.add(r.snapshot.blocks[b].size);
    s.kinds[r.retention.leaks.of_block[b]].add(r.snapshot.blocks[b].size);
  }
  std::vector<SiteRetention> out;
  for (SiteRetention& s : all) {
    if (s.live.blocks) out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SiteRetention& a, const SiteRetention& b) { return a.live.bytes > b.live.bytes; });
  return out;
}

std::vector<TypeRetention> retention_by_type(const SnapshotReport& r) {
  std::vector<TypeRetention> all(r.names.types().size());
  for (uint32_t t = 0; t < all.size(); ++t) all[t].type = t;
  for (uint32_t b = 0; b < r.snapshot.blocks.size(); ++b) {
    TypeRetention& row = all[r.names.type_of(b)];
    row.live.add(r.snapshot.blocks[b].size);
    row.objects += r.names.objects_of(b);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const TypeRetention& a, const TypeRetention& b) { return a.live.bytes > b.live.bytes; });
  return all;
}

std::string render_retention(const SnapshotReport& r, const RetentionOptions& o) {
  return heading(r) + '\n' + roots_section(r, o) + '\n' + leaks_section(r) + '\n' + sites_section(r, o) + '\n' +
         types_section(r, o);
}

}  // namespace memloupe::report
