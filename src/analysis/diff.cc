#include "analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/frame_names.h"
#include "analysis/sites.h"

namespace memloupe::analysis {
namespace {

constexpr double kZ975 = 1.959963984540054;

void add_sites(const Model& m, uint32_t depth, std::map<std::vector<std::string>, DiffRow>& rows, bool is_a) {
  for (Site& s : collect_sites(m.tree, depth)) {
    std::vector<std::string> key, names;
    std::vector<const Frame*> frames;
    for (FrameId f : s.frames) {
      key.push_back(m.tree.frame(f).key);
      names.push_back(m.tree.frame(f).function);
      frames.push_back(&m.tree.frame(f));
    }
    DiffRow& row = rows[key];
    if (row.frames.empty()) {
      row.frames = std::move(names);
      row.own = first_own_frame(frames);
    }
    (is_a ? row.a : row.b) += s.metrics;
  }
}

double half_width(const Estimate& e) { return std::max(e.hi - e.value, e.value - e.lo); }

}  // namespace

std::vector<DiffRow> diff_sites(const Model& a, const Model& b, uint32_t depth) {
  std::map<std::vector<std::string>, DiffRow> rows;
  add_sites(a, depth, rows, true);
  add_sites(b, depth, rows, false);
  std::vector<DiffRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

Estimate difference(const Estimate& a, const Estimate& b) {
  const double value = b.value - a.value;
  const double se_a = half_width(a) / kZ975, se_b = half_width(b) / kZ975;
  const double half = kZ975 * std::sqrt(se_a * se_a + se_b * se_b);
  // A side with no bound leaves the difference without one (either end).
  return {value, value - half, value + half, a.bounded && b.bounded};
}

}  // namespace memloupe::analysis
