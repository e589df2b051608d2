// Flat views of the call tree: allocation sites grouped by their innermost N
// frames (`top --depth N`), and the callers / callees of one function.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model.h"

namespace memloupe::analysis {

struct Site {
  std::vector<FrameId> frames;  // innermost first; at most `depth` of them
  Metrics metrics;
};

// One site per distinct innermost-`depth` frames (depth 0: the whole stack),
// summing the self metrics of every node whose path ends that way. Allocations
// whose every frame was hidden form the site with no frames. Unsorted.
std::vector<Site> collect_sites(const CallTree& tree, uint32_t depth);

// What a list is ordered by: a metric's bytes, or its object count.
struct SortKey {
  Metric metric = Metric::Allocated;
  bool by_objects = false;
};
// Largest first (point estimates); ties broken by frames so output is stable.
void sort_sites(std::vector<Site>& sites, SortKey key, const Estimator& estimator);
double sort_value(const Metrics& m, SortKey key, const Estimator& estimator);

// The frames around one function: for every stack with a frame whose function
// contains `function`, the caller is the frame just outside its outermost
// occurrence (none = called from the root), the callee the frame just inside its
// innermost occurrence (none = it allocated itself). Each allocation counts once.
struct Neighbour {
  std::optional<FrameId> frame;
  Metrics metrics;
};
struct Neighbours {
  std::vector<FrameId> matched;  // the distinct frames that matched `function`
  std::vector<Neighbour> callers;
  std::vector<Neighbour> callees;
  Metrics total;                 // over all stacks containing the function
};
Neighbours neighbours_of(const CallTree& tree, std::string_view function);

}  // namespace memloupe::analysis
