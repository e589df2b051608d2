#include "analysis/model.h"

#include <array>

namespace memloupe::analysis {
namespace {

constexpr std::array<std::string_view, kMetricCount> kMetricNames = {
    "allocated", "freed", "live", "peak", "leaked", "temporary"};

}  // namespace

std::string_view metric_name(Metric m) { return kMetricNames[static_cast<size_t>(m)]; }

std::optional<Metric> metric_from_name(std::string_view name) {
  for (size_t i = 0; i < kMetricCount; ++i) {
    if (kMetricNames[i] == name) return static_cast<Metric>(i);
  }
  return std::nullopt;
}

Expected<Model> analyze_events(const format::TraceInfo& info, const reader::SymbolTable& symbols,
                               std::span<const format::Event> events, const QueryArgs& args, Passes passes) {
  if (std::optional<Error> e = validate(args)) return *e;
  Model model;
  if (passes == Passes::Fewest && !needs_first_pass(args)) {
    Expected<Query> query = resolve(args, model.overview);
    if (!query) return query.error();
    OverviewBuilder overview_builder(info);
    {
      AggregateBuilder aggregate_builder(overview_builder, info, symbols, *query);
      for (const format::Event& e : events) aggregate_builder.add(e);
      model.aggregate = std::move(aggregate_builder).finish();
    }
    model.overview = std::move(overview_builder).finish();
  } else {
    OverviewBuilder overview_builder(info);
    for (const format::Event& e : events) overview_builder.add(e);
    model.overview = std::move(overview_builder).finish();
    Expected<Query> query = resolve(args, model.overview);
    if (!query) return query.error();
    AggregateBuilder aggregate_builder(model.overview, symbols, *query);
    for (const format::Event& e : events) aggregate_builder.add(e);
    model.aggregate = std::move(aggregate_builder).finish();
  }
  model.symbols = symbols;
  model.tree = build_call_tree(model.aggregate, model.symbols, model.overview.modules);
  return model;
}

}  // namespace memloupe::analysis
