// `memloupe leaks`: blocks still live when the trace ends, by site.
#include <map>
#include <string_view>

#include "analysis/frame_names.h"
#include "report/text_format.h"
#include "report/text_sites.h"
#include "report/text_views.h"

namespace memloupe::report {

std::string render_leaks(const analysis::Model& m, const TopOptions& options) {
  TopOptions o = options;
  o.key.metric = analysis::Metric::Leaked;
  SiteTableOptions t{o.key, o.limit, o.frames, o.min_count, o.full_names, o.all_frames};
  std::vector<analysis::Site> sites = analysis::collect_sites(m.tree, o.depth);
  if (o.csv) return site_table(m, sites, t).csv();
  if (o.json) return site_table(m, sites, t).json() + "\n";
  // The runtime's one-time allocations apart from the program's leaks. Judged on
  // the whole stack, whatever --depth groups the sites by.
  std::vector<analysis::Site> program, runtime;
  std::map<std::string_view, analysis::Count> runtime_kinds;
  for (analysis::Site& s : sites) {
    std::vector<const analysis::Frame*> frames;
    for (analysis::FrameId f : s.frames) frames.push_back(&m.tree.frame(f));
    const auto kind = analysis::one_time_runtime_allocation(frames);
    if (kind) runtime_kinds[*kind] += s.metrics[analysis::Metric::Leaked];
    (kind ? runtime : program).push_back(std::move(s));
  }
  const analysis::Estimator& e = m.aggregate.estimator;
  analysis::Count leaked;
  for (const analysis::Site& s : program) leaked += s.metrics[analysis::Metric::Leaked];
  std::string out = describe_selection(m);
  out += "Leaked: " + bytes_estimate(e.bytes(leaked), e.exact()) + " in " +
         count_estimate(e.objects(leaked), e.exact()) + " blocks never freed";
  out += m.overview.end_reason ? " before exit\n"
                               : " before the trace ends (it has no exit record: the program may have been killed)\n";
  if (!leaked.empty()) out += '\n' + site_table(m, program, t).render(o.width);
  if (runtime.empty()) return out;
  out += "\nKnown one-time runtime allocations (made once per process, never freed; not counted above):\n";
  for (const auto& [kind, c] : runtime_kinds) {
    out += "  " + std::string(kind) + ": " + bytes_estimate(e.bytes(c), e.exact()) + " in " +
           count_estimate(e.objects(c), e.exact()) + " blocks\n";
  }
  return out + site_table(m, runtime, t).render(o.width);
}

}  // namespace memloupe::report
