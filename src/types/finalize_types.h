// The types table, built at finalise (a finalize::FinalizeAddon): pass 1
// tells it each site's requested sizes, then each distinct site is inferred
// once (infer_site.h) with the symbolizer's open files, and the first
// candidate its sizes agree with is kept:
//   - a constructor or make_unique<T>: every block is sizeof(T) bytes;
//   - make_shared<T>: every block is sizeof the control block;
//   - an allocator<T>: every block sizeof(T) (node containers: one object per
//     block), or else every size a multiple of it (a buffer: T[]).
// Sites with no agreeing candidate are stored as TypeRule::Unknown when all
// their blocks had one size (`memloupe types` shows "(unknown, N B)"), and not
// at all otherwise ("(unknown, mixed sizes)").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "finalize/finalize.h"
#include "types/type_table.h"

namespace memloupe::types {

struct TypesStats {
  uint64_t sites = 0;          // distinct innermost return addresses
  uint64_t typed_sites = 0;
  uint64_t rejected_sites = 0; // with candidates, none agreeing with the sizes
  uint64_t bytes = 0;          // of every Alloc seen (sampled blocks in a sampled trace)
  uint64_t typed_bytes = 0;
};

class TypesAddon final : public finalize::FinalizeAddon {
 public:
  void alloc(const format::Alloc& alloc, const reader::BacktraceKey& key) override;
  std::vector<std::pair<format::ChunkType, std::vector<uint8_t>>> chunks(
      symbolize::Symbolizer& symbolizer, const symbolize::ModuleMap& modules,
      std::span<const symbolize::AddressInModule> addresses) override;

  const TypesStats& stats() const { return stats_; }
  const TypeTable& table() const { return table_; }

 private:
  struct Sizes {
    uint64_t min = UINT64_MAX;
    uint64_t max = 0;
    uint64_t gcd = 0;  // of every size: all are multiples of s iff gcd % s == 0
    uint64_t bytes = 0;
    // Every size's part but the gcd's (alloc() and add_size()).
    void take(uint64_t size) {
      min = std::min(min, size);
      max = std::max(max, size);
      bytes += size;
    }
  };
  // The index in sizes_ of the site at `address` (an Alloc's innermost frame).
  [[gnu::noinline]] uint32_t site_of(uint64_t address);
  // site_of() of an Alloc whose key has no memo of it yet, memoised there.
  [[gnu::noinline]] uint32_t site_of_key(uint64_t address, const reader::BacktraceKey& key);
  // Takes in a size that may change the site's gcd (alloc() takes the others).
  [[gnu::noinline]] static void add_size(Sizes& s, uint64_t size);

  std::vector<Sizes> sizes_;                    // one per site
  std::unordered_map<uint64_t, uint32_t> sites_;  // innermost frame -> index in sizes_
  // A direct-mapped cache of recent sites' indices (+ 1; 0: empty): most
  // allocations come from a site seen shortly before, and this runs once per
  // allocation of the trace. A reader's key keeps the index (+ 1) in its
  // addon_memo instead: the innermost frame's load, from the backtrace
  // cache's frames, missed the CPU's cache on deep-stack traces.
  struct Slot {
    uint64_t address = 0;
    uint32_t index = 0;
  };
  static constexpr size_t kSlots = 1024;
  std::array<Slot, kSlots> recent_{};
  TypeTable table_;
  TypesStats stats_;
};

}  // namespace memloupe::types
