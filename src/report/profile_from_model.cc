#include "report/profile_from_model.h"

#include <algorithm>
#include <unordered_map>

#include "analysis/frame_names.h"
#include "analysis/type_counts.h"

namespace memloupe::report {

namespace {

Amount amount(const analysis::Estimator& e, const analysis::Count& c) {
  if (e.exact()) return {e.bytes_value(c), e.objects_value(c)};
  return {e.bytes_value(c), e.objects_value(c), static_cast<double>(c.blocks), c.objects_var};
}

class LocationTable {
 public:
  LocationTable(const analysis::Model& model, Profile& profile) : model_(model), profile_(profile) {
    for (const analysis::ModuleInfo& m : model.overview.modules) {
      profile.mappings.push_back({m.start, m.end, 0, m.path, m.build_id});
    }
  }

  // The location of `address`, or nothing if every frame of it is hidden.
  std::optional<LocationId> of(uint64_t address) {
    auto [it, inserted] = index_.try_emplace(address);
    if (!inserted) return it->second;
    const auto& overview = model_.overview;
    const auto& hide = model_.aggregate.query.filter.hide;
    Location loc;
    loc.address = address;
    loc.symbolized = false;  // until a frame says otherwise
    if (const analysis::ModuleInfo* m = analysis::module_of(address, overview.modules)) {
      loc.mapping = MappingId{static_cast<uint32_t>(m - overview.modules.data())};
    }
    std::vector<analysis::Frame> frames = analysis::expand_address(address, model_.symbols, overview.modules);
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) {  // innermost first here
      if (!hide.empty() && analysis::contains_any(f->function, hide)) continue;
      loc.symbolized = loc.symbolized || f->symbolized;
      loc.frames.push_back({f->function, f->file, f->line, f->column});
    }
    if (loc.frames.empty()) return it->second = std::nullopt;
    profile_.locations.push_back(std::move(loc));
    return it->second = LocationId{static_cast<uint32_t>(profile_.locations.size() - 1)};
  }

 private:
  const analysis::Model& model_;
  Profile& profile_;
  std::unordered_map<uint64_t, std::optional<LocationId>> index_;
};

}  // namespace

Profile profile_from_model(const analysis::Model& model, const types::TypeTable* types) {
  const analysis::Overview& overview = model.overview;
  const analysis::Aggregate& aggregate = model.aggregate;
  const analysis::Estimator& e = aggregate.estimator;
  using analysis::Metric;

  Profile p;
  p.info = overview.info;
  p.duration_ns = overview.duration_ns;
  p.events = overview.events;
  LocationTable locations(model, p);

  for (uint32_t i = 0; i < aggregate.stacks.size(); ++i) {
    const analysis::StackStats& stats = aggregate.stacks[i];
    Site site;
    for (uint64_t address : aggregate.frames(analysis::StackId{i})) {
      if (std::optional<LocationId> id = locations.of(address)) site.stack.push_back(*id);
    }
    site.values.allocated = amount(e, stats.metrics[Metric::Allocated]);
    site.values.live = amount(e, stats.metrics[Metric::Live]);
    site.values.peak = amount(e, stats.metrics[Metric::Peak]);
    site.values.leaked = amount(e, stats.metrics[Metric::Leaked]);
    if (const types::SiteType* t = types ? analysis::stack_type(aggregate, analysis::StackId{i}, *types) : nullptr) {
      site.type = t->name;
      if (t->shape == types::TypeShape::Array) site.element_size = t->type_size;
    }
    for (const analysis::SeriesBucket& b : stats.series) {
      site.buckets.push_back({b.index, amount(e, b.allocated), amount(e, b.freed), amount(e, b.leaked)});
    }
    p.sites.push_back(std::move(site));
  }
  // The buckets that cover the trace: the width is a power of two, so the
  // last half of series_buckets may lie past the end (aggregate.h).
  p.bucket_count = analysis::series_buckets_covering(aggregate, overview.duration_ns);
  p.bucket_ns = aggregate.series_bucket_ns;

  // The heap curve: each bucket's highest point, at the bucket's start, so the
  // envelope (and the peak) is what the timeline shows.
  const analysis::Timeline& heap = overview.heap;
  for (size_t i = 0; i < heap.points.size(); ++i) {
    p.heap.push_back({i * heap.bucket_ns, heap.points[i].live_max});
  }
  for (const format::RssSample& r : overview.rss) p.rss.push_back({r.time_ns, static_cast<double>(r.rss_bytes)});
  const analysis::Timeline& mapped = overview.mapped.series;
  for (size_t i = 0; i < mapped.points.size(); ++i) {
    p.mapped.push_back({i * mapped.bucket_ns, mapped.points[i].live_max});
  }
  p.peak = {overview.peak.time_ns, e.bytes_value(overview.peak.live)};
  p.peak_live = amount(e, overview.peak.live);
  for (const analysis::MarkerInfo& m : overview.markers) p.markers.push_back({m.time_ns, m.name});

  p.selection_end_ns = p.duration_ns;
  if (const auto& window = aggregate.query.filter.window) {
    p.selection_begin_ns = window->begin_ns;
    p.selection_end_ns = std::min(window->end_ns, p.duration_ns);
  }
  return p;
}

}  // namespace memloupe::report
