#include "analysis/type_counts.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace memloupe::analysis {
namespace {

struct Key {
  std::string name;
  uint64_t size = 0;
  bool operator<(const Key& o) const { return std::tie(name, size) < std::tie(o.name, o.size); }
};

Estimate scaled(Estimate e, double by) { return {e.value / by, e.lo / by, e.hi / by, e.bounded}; }

// Finalise checked every block of the site against the type; a table that does
// not describe these events (another build's, or damaged) is caught here by
// what the counts can still tell: blocks of one size sum to blocks × size, and
// blocks that are all multiples of a size sum to a multiple of it.
bool agrees(const types::SiteType& t, const Count& c) {
  if (t.shape == types::TypeShape::Array) return c.bytes % t.type_size == 0;
  return c.bytes == c.blocks * t.block_size;
}

// The table's entry for the stack's site, if its counts do not contradict it.
const types::SiteType* site_entry(const Aggregate& a, StackId id, const types::TypeTable& table) {
  const auto frames = a.frames(id);
  if (frames.empty()) return nullptr;
  auto it = table.find(frames[0]);
  if (it == table.end() || !agrees(it->second, a.stacks[id.value].metrics[Metric::Allocated])) return nullptr;
  return &it->second;
}

}  // namespace

const types::SiteType* stack_type(const Aggregate& aggregate, StackId id, const types::TypeTable& table) {
  const types::SiteType* t = site_entry(aggregate, id, table);
  return t != nullptr && t->rule != types::TypeRule::Unknown ? t : nullptr;
}

std::string type_row_name(const types::SiteType* site) {
  if (site == nullptr) return "(unknown, mixed sizes)";
  if (site->rule == types::TypeRule::Unknown) return "(unknown, " + std::to_string(site->block_size) + " B)";
  return site->name;
}

Estimate TypeCount::objects(Metric m, const Estimator& estimator) const {
  if (shape == types::TypeShape::Array) return scaled(estimator.bytes(metrics[m]), static_cast<double>(type_size));
  return estimator.objects(metrics[m]);
}

std::vector<TypeCount> count_types(const Model& model, const types::TypeTable& table, TypeOrder order) {
  const Aggregate& a = model.aggregate;
  std::map<Key, TypeCount> rows;
  for (uint32_t id = 0; id < a.stacks.size(); ++id) {
    const types::SiteType* site = site_entry(a, StackId{id}, table);
    const Key key{type_row_name(site),
                  site == nullptr ? 0 : site->rule == types::TypeRule::Unknown ? site->block_size : site->type_size};
    TypeCount& row = rows[key];
    if (row.type.empty()) {
      row.type = key.name;
      row.type_size = key.size;
      row.known = site != nullptr && site->rule != types::TypeRule::Unknown;
      if (row.known) row.shape = site->shape;
    }
    if (row.known && std::ranges::find(row.rules, site->rule) == row.rules.end()) row.rules.push_back(site->rule);
    row.metrics += a.stacks[id].metrics;
    row.stacks.push_back(StackId{id});
  }
  std::vector<TypeCount> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    std::ranges::sort(row.rules);
    out.push_back(std::move(row));
  }
  const Estimator& e = a.estimator;
  auto value = [&](const TypeCount& t) {
    switch (order) {
      case TypeOrder::Bytes: return e.bytes_value(t.metrics[Metric::Allocated]);
      case TypeOrder::Live: return e.bytes_value(t.metrics[Metric::Leaked]);
      case TypeOrder::Count: break;
    }
    return t.objects(Metric::Allocated, e).value;
  };
  std::ranges::stable_sort(out, [&](const TypeCount& x, const TypeCount& y) { return value(x) > value(y); });
  return out;
}

std::vector<TypeStack> type_stacks(const Model& model, const TypeCount& type, uint32_t depth, double min_count) {
  const Estimator& e = model.aggregate.estimator;
  std::map<std::vector<FrameId>, Count> merged;
  for (StackId id : type.stacks) {
    std::vector<FrameId> frames = model.tree.path(model.tree.leaf_of(id));
    std::ranges::reverse(frames);  // innermost first
    if (depth != 0 && frames.size() > depth) frames.resize(depth);
    merged[frames] += model.aggregate.stacks[id.value].metrics[Metric::Allocated];
  }
  std::vector<TypeStack> out;
  for (auto& [frames, count] : merged) {
    TypeStack s{frames, count, {}, e.bytes(count)};
    s.objects = type.shape == types::TypeShape::Array ? scaled(s.bytes, static_cast<double>(type.type_size))
                                                      : e.objects(count);
    if (s.objects.value < min_count) continue;
    out.push_back(std::move(s));
  }
  std::ranges::stable_sort(out, [](const TypeStack& x, const TypeStack& y) { return x.objects.value > y.objects.value; });
  return out;
}

}  // namespace memloupe::analysis
