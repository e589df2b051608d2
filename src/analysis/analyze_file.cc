// The two-pass driver over a trace file (see model.h). The reader maps the file,
// so opening it a second time costs next to nothing.
#include <memory>

#include "analysis/model.h"

namespace memloupe::analysis {
namespace {

// Reports progress every this many events (a cheap check on the hot loop).
constexpr uint64_t kProgressEvery = 1 << 16;

template <class Builder>
void stream(reader::Reader& r, Builder& builder, const Progress& progress, double base) {
  const double size = static_cast<double>(r.file_size() ? r.file_size() : 1);
  uint64_t n = 0;
  while (const format::Event* e = r.next()) {
    builder.add(*e);
    if (progress && ++n % kProgressEvery == 0) progress(base + 0.5 * static_cast<double>(r.offset()) / size);
  }
}

}  // namespace

Expected<Model> analyze_file(const std::string& path, const QueryArgs& args, const Progress& progress) {
  if (std::optional<Error> e = validate(args)) return *e;

  Expected<std::unique_ptr<reader::Reader>> first = reader::Reader::open(path);
  if (!first) return first.error();
  OverviewBuilder overview_builder((*first)->info());
  stream(**first, overview_builder, progress, 0.0);
  Model model;
  model.overview = std::move(overview_builder).finish((*first)->error());
  first->reset();

  Expected<Query> query = resolve(args, model.overview);
  if (!query) return query.error();

  Expected<std::unique_ptr<reader::Reader>> second = reader::Reader::open(path);
  if (!second) return second.error();
  {
    AggregateBuilder aggregate_builder(model.overview, (*second)->symbols(), *query);
    stream(**second, aggregate_builder, progress, 0.5);
    model.aggregate = std::move(aggregate_builder).finish();
  }
  model.symbols = (*second)->symbols();
  model.tree = build_call_tree(model.aggregate, model.symbols, model.overview.modules);
  if (progress) progress(1.0);
  return model;
}

}  // namespace memloupe::analysis
