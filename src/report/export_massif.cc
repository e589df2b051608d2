#include "report/export_massif.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "report/frame_names.h"

namespace memloupe::report {

namespace {

constexpr uint32_t kMaxGroups = 98;
constexpr int kMaxDepth = 30;  // massif's default --depth
constexpr double kThresholdPercent = 1.0;

// Live bytes per site at one moment.
using SiteBytes = std::vector<uint64_t>;

struct Snapshot {
  uint64_t time_ns = 0;
  SiteBytes live;
  bool detailed = false;
  bool peak = false;
};

uint64_t total(const SiteBytes& live) {
  uint64_t sum = 0;
  for (uint64_t b : live) sum += b;
  return sum;
}

// Snapshots at the ends of up to kMaxGroups buckets spread evenly over the
// trace, from each site's running (allocated - freed) bytes.
std::vector<Snapshot> bucket_snapshots(const Profile& profile) {
  std::vector<Snapshot> snaps;
  snaps.push_back({0, SiteBytes(profile.sites.size(), 0)});
  const uint32_t buckets = profile.bucket_count;
  const uint32_t groups = std::min(buckets, kMaxGroups);
  if (groups == 0) return snaps;
  std::vector<uint32_t> last_bucket(groups);  // snapshot g is taken at the end of this bucket
  for (uint32_t g = 0; g < groups; ++g) last_bucket[g] = static_cast<uint32_t>(uint64_t{g + 1} * buckets / groups - 1);
  for (uint32_t g = 0; g < groups; ++g) {
    uint64_t end = uint64_t{last_bucket[g] + 1} * profile.bucket_ns;
    snaps.push_back({std::min(end, profile.duration_ns), SiteBytes(profile.sites.size(), 0)});
  }
  for (size_t s = 0; s < profile.sites.size(); ++s) {
    const std::vector<Bucket>& series = profile.sites[s].buckets;  // sorted by index
    double running = 0;
    size_t next = 0;
    for (uint32_t g = 0; g < groups; ++g) {
      for (; next < series.size() && series[next].index <= last_bucket[g]; ++next) {
        running += series[next].allocated.bytes - series[next].freed.bytes;
      }
      snaps[g + 1].live[s] = running > 0 ? static_cast<uint64_t>(std::llround(running)) : 0;
    }
  }
  return snaps;
}

// The inverted call tree of one snapshot: allocation point first, callers below.
struct Node {
  std::string label;
  uint64_t bytes = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

std::string node_label(const Profile& profile, const Location& loc, const SourceFrame* frame) {
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%" PRIX64 ": ", loc.address);
  std::string label = addr + frame_name(profile, loc, frame);
  if (frame != nullptr && !frame->file.empty()) {
    label += " (" + frame->file + ":" + std::to_string(frame->line) + ")";
  } else if (loc.mapping && loc.mapping->value < profile.mappings.size()) {
    label += " (in " + profile.mappings[loc.mapping->value].path + ")";
  }
  // ms_print strips everything after '#' as a comment.
  std::replace(label.begin(), label.end(), '#', '_');
  std::replace(label.begin(), label.end(), '\n', ' ');
  return label;
}

Node build_tree(const Profile& profile, const SiteBytes& live) {
  Node root{"(heap allocation functions) malloc/new/new[], --alloc-fns, etc."};
  for (size_t s = 0; s < live.size(); ++s) {
    if (live[s] == 0) continue;
    root.bytes += live[s];
    Node* node = &root;
    int depth = 0;
    for (LocationId id : profile.sites[s].stack) {
      const Location& loc = profile.location(id);
      std::vector<const SourceFrame*> frames;
      for (const SourceFrame& f : loc.frames) frames.push_back(&f);
      if (frames.empty()) frames.push_back(nullptr);
      for (const SourceFrame* f : frames) {
        if (++depth > kMaxDepth) break;
        std::string label = node_label(profile, loc, f);
        auto& child = node->children[label];
        if (!child) child = std::make_unique<Node>(Node{label});
        child->bytes += live[s];
        node = child.get();
      }
    }
  }
  return root;
}

void write_node(const Node& node, uint64_t snapshot_total, int indent, std::ostream& out) {
  std::vector<const Node*> kids;
  for (const auto& [label, child] : node.children) kids.push_back(child.get());
  std::stable_sort(kids.begin(), kids.end(), [](const Node* a, const Node* b) { return a->bytes > b->bytes; });
  std::vector<const Node*> shown;
  uint64_t below_bytes = 0;
  size_t below_count = 0;
  for (const Node* k : kids) {
    if (static_cast<double>(k->bytes) * 100 >= kThresholdPercent * static_cast<double>(snapshot_total)) {
      shown.push_back(k);
    } else {
      below_bytes += k->bytes;
      ++below_count;
    }
  }
  std::string pad(indent, ' ');
  out << pad << 'n' << shown.size() + (below_count ? 1 : 0) << ": " << node.bytes << ' ' << node.label << '\n';
  for (const Node* k : shown) write_node(*k, snapshot_total, indent + 1, out);
  if (below_count == 1) {
    out << pad << " n0: " << below_bytes << " in 1 place, below massif's threshold (1.00%)\n";
  } else if (below_count > 1) {
    out << pad << " n0: " << below_bytes << " in " << below_count
        << " places, all below massif's threshold (1.00%)\n";
  }
}

std::string command_line(const format::TraceInfo& info) {
  std::string cmd;
  for (const std::string& arg : info.argv) cmd += (cmd.empty() ? "" : " ") + arg;
  if (cmd.empty()) cmd = info.executable;
  std::replace(cmd.begin(), cmd.end(), '\n', ' ');
  return cmd.empty() ? "(unknown)" : cmd;
}

}  // namespace

void write_massif(const Profile& profile, std::ostream& out) {
  std::vector<Snapshot> snaps = bucket_snapshots(profile);
  if (profile.peak.bytes > 0) {
    Snapshot peak{profile.peak.time_ns, {}, true, true};
    for (const Site& site : profile.sites) {
      double v = site.values.peak.bytes;
      peak.live.push_back(v > 0 ? static_cast<uint64_t>(std::llround(v)) : 0);
    }
    auto at = std::upper_bound(snaps.begin(), snaps.end(), peak.time_ns,
                               [](uint64_t t, const Snapshot& s) { return t < s.time_ns; });
    snaps.insert(at, std::move(peak));
  }
  for (size_t i = 0; i < snaps.size(); ++i) {
    if (i % 10 == 9 || i + 1 == snaps.size()) snaps[i].detailed = true;
  }

  out << "desc: memloupe export of a trace of " << command_line(profile.info) << '\n'
      << "cmd: " << command_line(profile.info) << '\n'
      << "time_unit: ms\n";
  for (size_t i = 0; i < snaps.size(); ++i) {
    const Snapshot& s = snaps[i];
    uint64_t bytes = total(s.live);
    out << "#-----------\nsnapshot=" << i << "\n#-----------\n"
        << "time=" << s.time_ns / 1000000 << '\n'
        << "mem_heap_B=" << bytes << '\n'
        << "mem_heap_extra_B=0\nmem_stacks_B=0\n";
    if (!s.detailed && !s.peak) {
      out << "heap_tree=empty\n";
      continue;
    }
    out << "heap_tree=" << (s.peak ? "peak" : "detailed") << '\n';
    write_node(build_tree(profile, s.live), bytes, 0, out);
  }
}

}  // namespace memloupe::report
