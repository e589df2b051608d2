// `memloupe lifetimes`: how long blocks live, and which sites make temporaries.
#include <algorithm>

#include "format/wire.h"
#include "report/text_format.h"
#include "report/text_sites.h"
#include "report/text_views.h"

namespace memloupe::report {
namespace {

constexpr size_t kBarWidth = 30;

std::string bar(double part, double whole) {
  if (whole <= 0) return {};
  const size_t eighths = static_cast<size_t>(part / whole * kBarWidth * 8 + 0.5);
  static constexpr const char* kPartial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  std::string out;
  for (size_t i = 0; i < eighths / 8; ++i) out += "█";
  return out + kPartial[eighths % 8];
}

}  // namespace

std::string render_lifetimes(const analysis::Model& m, const LifetimeOptions& o) {
  // Every trace memloupe reads keeps times in whole ticks: 1 µs in memtrace's
  // (docs/MEMTRACE.md) and in format version 1, the header's time unit in
  // version 2 (docs/FORMAT.md §5.2; --all traces: 32 µs by default). A block
  // freed in the tick it was allocated in has lifetime 0: it lived less than a
  // tick, not "0 ns"; one of n ticks lived between n - 1 and n + 1 ticks.
  const uint64_t tick_ns = m.overview.info.time_unit_ns();
  const analysis::Estimator& e = m.aggregate.estimator;
  const analysis::LifetimeHistogram& h = m.aggregate.lifetimes;
  size_t first = h.kBuckets, last = 0;
  for (size_t i = 0; i < h.kBuckets; ++i) {
    if (h.freed[i].empty()) continue;
    first = std::min(first, i);
    last = i;
  }
  const double all = e.objects_value(m.aggregate.totals[analysis::Metric::Allocated]);
  TextTable t;
  t.add_column("lifetime", TextTable::Align::Left, {"lifetime_min_ns", "lifetime_max_ns"});
  t.add_column("blocks", TextTable::Align::Right, estimate_csv_headers("blocks"));
  t.add_column("bytes", TextTable::Align::Right, estimate_csv_headers("bytes"));
  t.add_column("share of blocks", TextTable::Align::Left, {"share_percent"});
  auto add = [&](std::string label, std::vector<std::string> range, const analysis::Count& c) {
    const double v = e.objects_value(c);
    t.add_row({Cell{std::move(label), std::move(range)}, objects_cell(e, c), bytes_cell(e, c),
               Cell{bar(v, all) + " " + human_percent(v, all), {csv_percent(v, all)}}});
  };
  // Runs of empty buckets between the first and last used ones print as one row.
  for (size_t i = first; i <= last && first < h.kBuckets; ++i) {
    if (i > 0 && h.freed[i].empty() && analysis::LifetimeHistogram::bucket_floor(i + 1) <= tick_ns) {
      continue;  // finer than a tick: empty by construction, no row
    }
    size_t j = i;
    while (j + 1 <= last && h.freed[i].empty() && h.freed[j + 1].empty()) ++j;
    // Once the first row says "< 1 tick", the next starts at one tick, not at
    // its power-of-two floor (512 ns), which would overlap it: with whole-tick
    // times nothing lies below it there anyway.
    const uint64_t floor = analysis::LifetimeHistogram::bucket_floor(i);
    const uint64_t lo = first == 0 && i > 0 ? std::max(floor, tick_ns) : floor;
    const uint64_t hi = j == 0 ? tick_ns
                               : (j == 64 ? analysis::kForever : analysis::LifetimeHistogram::bucket_floor(j + 1));
    add(j == 0 ? "< " + human_duration(tick_ns) : human_duration(lo) + " – " + human_duration(hi),
        {std::to_string(lo), std::to_string(hi)}, h.freed[i]);
    i = j;
  }
  if (!h.never_freed.empty()) add("never freed", {"", ""}, h.never_freed);
  if (o.csv) return t.csv();
  if (o.json) return t.json() + "\n";

  const analysis::Count& temp = m.aggregate.totals[analysis::Metric::Temporary];
  std::string out = describe_selection(m) + "Lifetimes of the selected blocks (time from allocation to free)\n" +
                    (t.rows() ? t.render(o.width) : "(no blocks)\n");
  if (first == 0) {
    out += "(< " + human_duration(tick_ns) + ": freed within the tick it was allocated in, the trace's "
           "time resolution; shorter lifetimes cannot be told apart)\n";
  }
  if (tick_ns > format::kTimeUnitNs && t.rows()) {
    out += "(times are whole ticks of " + human_duration(tick_ns) +
           ": a lifetime of n ticks is between n - 1 and n + 1 ticks long)\n";
  }
  // With ticks coarser than the threshold, "within" means "in the same tick".
  const uint64_t within = m.aggregate.query.temporary_ns;
  out += "\nTemporary allocations (freed by the allocating thread within " +
         (within < tick_ns ? "the tick of " + human_duration(tick_ns)
                                     : human_duration(within)) + "): " + count_estimate(e.objects(temp), e.exact()) +
         " blocks, " + human_percent(e.objects_value(temp), all) + " of all; " +
         bytes_estimate(e.bytes(temp), e.exact()) + "\n";
  // heaptrack's "temporary": freed before the thread's next allocation. Only an
  // every-call trace sees the allocations in between.
  const analysis::Count& immediate = m.aggregate.immediate;
  out += "Freed before their thread's next allocation (heaptrack's \"temporary\"): ";
  out += e.exact() ? count_estimate(e.objects(immediate), true) + " blocks, " +
                         human_percent(e.objects_value(immediate), all) + " of all; " +
                         bytes_estimate(e.bytes(immediate), true) + "\n"
                   : "needs an --all trace (a sampled one does not see the allocations in between)\n";
  if (temp.empty()) return out;
  SiteTableOptions s;
  s.key = {analysis::Metric::Temporary, true};
  s.limit = o.top;
  s.frames = o.frames;
  s.all_frames = o.all_frames;
  s.full_names = o.full_names;
  return out + "\nSites by temporary blocks\n" + site_table(m, analysis::collect_sites(m.tree, 0), s).render(o.width);
}

}  // namespace memloupe::report
