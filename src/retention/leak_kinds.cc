#include "retention/leak_kinds.h"

namespace memloupe::retention {
namespace {

// Marking states, in memcheck's order of upgrade: Unreached -> Possible ->
// Reachable, and Unreached -> Indirect for the clique members.
enum class Mark : uint8_t { Unreached, Possible, Reachable, Indirect };

}  // namespace

const char* leak_kind_name(LeakKind kind) {
  switch (kind) {
    case LeakKind::StillReachable: return "still reachable";
    case LeakKind::PossiblyLost: return "possibly lost";
    case LeakKind::IndirectlyLost: return "indirectly lost";
    case LeakKind::DefinitelyLost: return "definitely lost";
  }
  return "?";
}

Amount& LeakSummary::operator[](LeakKind kind) {
  switch (kind) {
    case LeakKind::StillReachable: return still_reachable;
    case LeakKind::PossiblyLost: return possibly_lost;
    case LeakKind::IndirectlyLost: return indirectly_lost;
    case LeakKind::DefinitelyLost: break;
  }
  return definitely_lost;
}

const Amount& LeakSummary::operator[](LeakKind kind) const {
  return const_cast<LeakSummary&>(*this)[kind];
}

LeakKinds classify_leaks(const HeapSnapshot& snapshot, const NodeGraph& g) {
  std::vector<Mark> mark(g.blocks, Mark::Unreached);
  std::vector<uint32_t> work;

  // Pass 1, from the roots. A block is Reachable when reached from a root or a
  // Reachable block through a start pointer, else Possible. As in memcheck, a
  // Possible block reached again that way is upgraded and scanned again, so
  // the result is the closure and does not depend on the visiting order; each
  // block is pushed at most twice.
  auto reach = [&](uint32_t v, bool definite_prior) {
    for (size_t i = 0; i < g.succ.neighbours(v).size(); ++i) {
      const uint32_t b = g.block_of(g.succ.neighbours(v)[i]);
      const bool start = g.succ.interior_of(v)[i] == 0;
      if (mark[b] == Mark::Reachable) continue;
      if (start && definite_prior) {
        mark[b] = Mark::Reachable;
        work.push_back(b);
      } else if (mark[b] == Mark::Unreached) {
        mark[b] = Mark::Possible;
        work.push_back(b);
      }
    }
  };
  for (uint32_t r = 0; r < g.roots; ++r) {
    reach(g.vertex_of_root(r), true);
    while (!work.empty()) {
      const uint32_t b = work.back();
      work.pop_back();
      reach(g.vertex_of_block(b), mark[b] == Mark::Reachable);
    }
  }

  // Pass 2, the cliques, in address order. The leader stays Unreached
  // (definitely lost); what it reaches through any pointer and is still
  // Unreached joins its clique, earlier leaders included.
  for (uint32_t leader = 0; leader < g.blocks; ++leader) {
    if (mark[leader] != Mark::Unreached) continue;
    work.push_back(leader);
    while (!work.empty()) {
      const uint32_t b = work.back();
      work.pop_back();
      for (uint32_t w : g.succ.neighbours(g.vertex_of_block(b))) {
        const uint32_t c = g.block_of(w);
        if (c == leader || mark[c] != Mark::Unreached) continue;
        mark[c] = Mark::Indirect;
        work.push_back(c);
      }
    }
  }

  LeakKinds out;
  out.of_block.resize(g.blocks);
  for (uint32_t b = 0; b < g.blocks; ++b) {
    LeakKind kind = LeakKind::DefinitelyLost;
    switch (mark[b]) {
      case Mark::Reachable: kind = LeakKind::StillReachable; break;
      case Mark::Possible: kind = LeakKind::PossiblyLost; break;
      case Mark::Indirect: kind = LeakKind::IndirectlyLost; break;
      case Mark::Unreached: break;
    }
    out.of_block[b] = kind;
    out.summary[kind].add(snapshot.blocks[b].size);
  }
  return out;
}

}  // namespace memloupe::retention
