// `memloupe retention TRACE`: the heap snapshots a trace holds — which root
// (global, stack frame, registers, TLS) retains how many bytes, the dominator
// tree, who holds a block, and memcheck's leak kinds (docs/RETENTION.md).
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/retention_input.h"
#include "cli/text_options.h"
#include "cli/trace_input.h"
#include "report/retention_json.h"

namespace memloupe::cli {
namespace {

// --snapshot LABEL|N: a label first (labels may be numbers), else the N-th
// snapshot counting from 1, as the text view numbers them.
std::optional<size_t> select_snapshot(const retention::SnapshotSet& set, const std::string& spec) {
  for (size_t i = 0; i < set.snapshots.size(); ++i) {
    if (set.snapshots[i].label == spec) return i;
  }
  size_t n = 0;
  const char* end = spec.data() + spec.size();
  if (!spec.empty() && std::from_chars(spec.data(), end, n).ptr == end && n >= 1 && n <= set.snapshots.size()) {
    return n - 1;
  }
  return std::nullopt;
}

}  // namespace

Command add_retention_command(CLI::App& app) {
  struct Options {
    std::string trace;
    std::string snapshot;
    std::string paths;
    bool tree = false;
    bool json = false;
    report::SiteStyle style;
    report::RetentionOptions view;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "retention", "Heap snapshots: which global, stack frame or thread retains how many bytes; leak kinds");
  sub->add_option("trace", o->trace, "Trace file")->required();
  sub->add_option("--snapshot", o->snapshot, "The snapshot to show: its label, or N counting from 1 (default: all)");
  auto* tree = sub->add_flag("--tree", o->tree, "The dominator tree: root -> block -> block with retained bytes");
  auto* paths = sub->add_option(
      "--paths", o->paths, "Shortest paths from roots to BLOCK (allocation id), ADDRESS (0x...) or SITE (function name)");
  auto* json = sub->add_flag("--json", o->json, "Everything as JSON (docs/RETENTION.md lists the fields)");
  // One view at a time: the JSON holds the roots, their biggest blocks and the leak kinds, not trees or paths.
  tree->excludes(paths)->excludes(json);
  paths->excludes(json);
  // The text views' shared options (cli/text_options.h): -n is the roots
  // table's rows, --frames, --all-frames and --depth shape the sites as in top.
  o->view.frames = report::kDefaultFrames;
  add_limit_option(sub, o->view.roots);
  add_frames_option(sub, o->view.frames, o->style.all_frames);
  add_depth_option(sub, o->style.depth);
  add_full_names_flag(sub, o->style.full_names);
  sub->add_option("--blocks", o->view.blocks, "Biggest retained blocks shown under each root")->capture_default_str();
  sub->add_option("--sites", o->view.sites, "Rows of the by-site and by-type tables (0: all)")->capture_default_str();
  sub->add_option("--tree-depth", o->view.depth, "--tree: levels shown below each root")->capture_default_str();
  sub->add_option("--breadth", o->view.breadth, "--tree: children shown per block")->capture_default_str();
  return {sub, [o]() -> int {
            int code = kOk;
            // Opened for its checks and messages (not a trace, a newer version...);
            // the snapshots need no read of its events (snapshot_load.h).
            if (!open_trace(o->trace, code)) return code;
            types::TypeTable types;
            retention::SnapshotSet set = load_retention(o->trace, types);
            if (!set.damage.empty()) code = kDamaged;

            std::vector<size_t> chosen;
            if (!o->snapshot.empty()) {
              const std::optional<size_t> i = select_snapshot(set, o->snapshot);
              if (!i) {
                complain(o->trace, "no snapshot labelled or numbered '" + o->snapshot + "' (it holds " +
                                       std::to_string(set.snapshots.size()) + ")");
                return kUsage;
              }
              chosen.push_back(*i);
            } else {
              for (size_t i = 0; i < set.snapshots.size(); ++i) chosen.push_back(i);
            }
            if (chosen.empty() && set.damage.empty() && !o->json) {
              std::cout << o->trace
                        << " holds no heap snapshot. Snapshots are taken by `memloupe run --all` at exit, when the "
                           "program calls memloupe_snapshot(), or on --snapshot-signal.\n";
            }

            o->view.width = o->json ? 0 : table_width();
            const std::unique_ptr<RetentionInput> in =
                analyse_snapshots(std::move(set), chosen, o->style, std::move(types));
            const std::vector<report::SnapshotReport>& reports = in->reports;

            if (o->json) {
              std::cout << report::retention_json(reports, o->view, in->set.damage);
            } else {
              for (size_t k = 0; k < reports.size(); ++k) {
                const report::SnapshotReport& r = reports[k];
                if (k > 0) std::cout << '\n';
                if (!o->paths.empty()) {
                  std::cout << "Snapshot " << r.number << " \"" << r.snapshot.label << "\": "
                            << report::render_retention_paths(r, report::find_path_target(r, o->paths), o->view);
                } else if (o->tree) {
                  std::cout << "Snapshot " << r.number << " \"" << r.snapshot.label << "\": "
                            << report::render_retention_tree(r, o->view);
                } else {
                  std::cout << report::render_retention(r, o->view);
                }
              }
            }
            if (!in->set.damage.empty()) complain(o->trace, in->set.damage);
            return code;
          }};
}

}  // namespace memloupe::cli
