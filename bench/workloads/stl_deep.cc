// Workload (b): STL-heavy, single-threaded, deep call stacks. Each round builds a random
// tree whose depth is drawn from 30–80 levels by mutual recursion (build_node ->
// build_children -> build_node, so a leaf allocation is 60–160 frames deep), evaluates
// it recursively with strings, vectors, maps and an unordered_map memo, and files the
// results into a long-lived index. Everything is seeded, so the output is fixed.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "args.h"
#include "rng.h"

namespace {

using bench::Rng;

struct Node {
  std::string label;
  std::map<std::string, int64_t> attrs;
  std::vector<std::unique_ptr<Node>> kids;
};

std::unique_ptr<Node> build_node(Rng& rng, int remaining);

// Mostly one child (a deep spine); sometimes two, so the tree has some width too.
__attribute__((noinline)) void build_children(Rng& rng, Node& node, int remaining) {
  int count = rng.one_in(40) ? 2 : 1;
  for (int i = 0; i < count; ++i) node.kids.push_back(build_node(rng, remaining - 1));
}

__attribute__((noinline)) std::unique_ptr<Node> build_node(Rng& rng, int remaining) {
  auto node = std::make_unique<Node>();
  // Longer than the small-string buffer, so every label is a heap block.
  node->label = "tree-node/level-" + std::to_string(remaining) + "/id-" +
                std::to_string(rng.below(4096));
  int n_attrs = 1 + static_cast<int>(rng.below(3));
  for (int a = 0; a < n_attrs; ++a) {
    node->attrs["attribute-number-" + std::to_string(rng.below(16))] =
        static_cast<int64_t>(rng.below(1000));
  }
  if (remaining > 0) build_children(rng, *node, remaining);
  return node;
}

using Memo = std::unordered_map<std::string, int64_t>;

int64_t evaluate(const Node& node, std::vector<std::string>& path, Memo& memo);

__attribute__((noinline)) int64_t evaluate_kids(const Node& node, std::vector<std::string>& path,
                                                Memo& memo) {
  int64_t sum = 0;
  for (const auto& kid : node.kids) sum += evaluate(*kid, path, memo);
  return sum;
}

// Keeps the path from the root as strings (so the vector grows and reallocates with
// depth) and memoises by "parent>label", building a fresh key string at every level.
__attribute__((noinline)) int64_t evaluate(const Node& node, std::vector<std::string>& path,
                                           Memo& memo) {
  std::string key = (path.empty() ? std::string("root") : path.back()) + ">" + node.label;
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  path.push_back(node.label);
  int64_t value = static_cast<int64_t>(node.label.size());
  for (const auto& [name, attr] : node.attrs) value += attr * static_cast<int64_t>(name.size());
  value += evaluate_kids(node, path, memo);
  path.pop_back();
  memo.emplace(std::move(key), value);
  return value % 1000000007;
}

// Long-lived: a bounded index from label suffix to the values seen, kept across rounds.
using Index = std::map<std::string, std::vector<int64_t>>;

__attribute__((noinline)) void file_result(Index& index, const Node& root, int64_t value) {
  std::string name = root.label.substr(root.label.rfind('/') + 1);
  std::vector<int64_t>& values = index[name];
  values.push_back(value);
  if (values.size() > 64) values.erase(values.begin(), values.begin() + 32);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t rounds = 6000;
  uint64_t seed = 7;
  uint64_t min_depth = 30;
  uint64_t max_depth = 80;
  bench::parse_args(argc, argv,
                    {{"rounds", &rounds, "trees built and evaluated"},
                     {"seed", &seed, "PRNG seed"},
                     {"min-depth", &min_depth, "shallowest tree"},
                     {"max-depth", &max_depth, "deepest tree"}});
  if (min_depth > max_depth || max_depth > 1000) {
    std::fprintf(stderr, "need min-depth <= max-depth <= 1000\n");
    return 2;
  }
  Rng rng(seed);
  Index index;
  uint64_t checksum = 0;
  for (uint64_t r = 0; r < rounds; ++r) {
    int depth = static_cast<int>(min_depth + rng.below(max_depth - min_depth + 1));
    std::unique_ptr<Node> root = build_node(rng, depth);
    std::vector<std::string> path;
    Memo memo;
    int64_t value = evaluate(*root, path, memo);
    file_result(index, *root, value);
    checksum = (checksum ^ static_cast<uint64_t>(value)) * 0x100000001b3ull;
  }
  std::printf("stl_deep rounds=%llu index=%zu checksum=%016llx\n",
              static_cast<unsigned long long>(rounds), index.size(),
              static_cast<unsigned long long>(checksum));
  return 0;
}
