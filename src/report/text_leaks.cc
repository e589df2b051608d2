// `memloupe leaks`: blocks still live when the trace ends, by site.
#include "report/text_format.h"
#include "report/text_sites.h"
#include "report/text_views.h"

namespace memloupe::report {

std::string render_leaks(const analysis::Model& m, const TopOptions& options) {
  TopOptions o = options;
  o.key.metric = analysis::Metric::Leaked;
  SiteTableOptions t{o.key, o.limit, o.frames, o.min_count, o.full_names, o.all_frames};
  const TextTable table = site_table(m, analysis::collect_sites(m.tree, o.depth), t);
  if (o.csv) return table.csv();
  if (o.json) return table.json() + "\n";
  const analysis::Estimator& e = m.aggregate.estimator;
  const analysis::Count& leaked = m.aggregate.totals[analysis::Metric::Leaked];
  std::string out = describe_selection(m);
  out += "Leaked: " + bytes_estimate(e.bytes(leaked), e.exact()) + " in " +
         count_estimate(e.objects(leaked), e.exact()) + " blocks never freed";
  out += m.overview.end_reason ? " before exit\n"
                               : " before the trace ends (it has no exit record: the program may have been killed)\n";
  if (leaked.empty()) return out;
  return out + '\n' + table.render(o.width);
}

}  // namespace memloupe::report
