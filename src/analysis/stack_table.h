// StackTable: interns backtraces (spans of return addresses) as dense ids.
//
// Every Alloc carries its backtrace; the table turns it into an index with one
// hash over the frames and, usually, one comparison. The frames of all distinct
// stacks live back to back in one pool; an open-addressing index of
// (hash, id) pairs finds them.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace memloupe::analysis {

class StackTable {
 public:
  StackTable();

  // The id of `frames` (new ids are size() before the call) and whether it is new.
  std::pair<uint32_t, bool> intern(std::span<const uint64_t> frames);

  std::span<const uint64_t> frames(uint32_t id) const {
    const Range& r = ranges_[id];
    return {pool_.data() + r.begin, r.size};
  }
  size_t size() const { return ranges_.size(); }

 private:
  struct Range {
    size_t begin;
    uint32_t size;
    uint32_t hash;  // the low bits of the stack's hash, to skip most comparisons
  };
  static constexpr uint32_t kEmpty = ~uint32_t{0};

  void grow();

  std::vector<uint64_t> pool_;
  std::vector<Range> ranges_;
  std::vector<uint32_t> index_;  // ids by hash slot; kEmpty = free
  size_t mask_ = 0;
};

}  // namespace memloupe::analysis
