#include "symbolize/snapshot_sites.h"

#include <variant>

#include "format/history.h"
#include "format/snapshot_writer.h"

namespace memloupe::symbolize {

SnapshotSites::SnapshotSites(const reader::RawSnapshots& raw) {
  for (const reader::RawSnapshot& s : raw.snapshots) {
    std::vector<uint64_t>& ids = alloc_ids_.emplace_back();
    for (const reader::RawSnapshotBlock& b : s.blocks) ids.push_back(b.alloc_id);
    ids_.insert(ids_.end(), ids.begin(), ids.end());
  }
  std::ranges::sort(ids_);
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
  stack_plus_one_.assign(ids_.size(), 0);
  size_.assign(ids_.size(), 0);
}

// AllocIds come in file order (format/events.h), so a cursor over the sorted
// ids finds each in O(1); an id behind the cursor (a hand-made trace) is
// looked up by binary search instead.
size_t SnapshotSites::wanted(uint64_t id) {
  if (cursor_ > 0 && id <= ids_[cursor_ - 1]) {
    const auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    return it != ids_.end() && *it == id ? static_cast<size_t>(it - ids_.begin()) : SIZE_MAX;
  }
  while (cursor_ < ids_.size() && ids_[cursor_] < id) ++cursor_;
  return cursor_ < ids_.size() && ids_[cursor_] == id ? cursor_++ : SIZE_MAX;
}

void SnapshotSites::add(const format::Event& event) {
  if (alloc_ids_.empty()) return;
  if (const auto* a = std::get_if<format::Alloc>(&event)) {
    add_block(a->id.value, a->size, a->backtrace);
  } else if (const auto* t = std::get_if<format::ThreadStart>(&event)) {
    reader::RawSnapshotThread& thread = threads_[t->thread.value];
    thread.id = t->thread.value;
    thread.os_tid = t->os_tid;
  } else if (const auto* n = std::get_if<format::ThreadName>(&event)) {
    reader::RawSnapshotThread& thread = threads_[n->thread.value];
    thread.id = n->thread.value;
    thread.name = n->name;
  }
}

uint32_t SnapshotSites::stack_of(std::span<const uint64_t> backtrace, bool seen) {
  // The annex keeps as many frames as its format allows.
  const auto frames = backtrace.first(std::min(backtrace.size(), format::SnapshotWriter::kMaxAnnexFrames));
  const uint64_t hash = format::backtrace_hash(frames);
  auto [it, end] = stack_index_.equal_range(hash);
  while (it != end && !std::ranges::equal(stacks_[it->second], frames)) ++it;
  if (it == end) {
    it = stack_index_.emplace(hash, static_cast<uint32_t>(stacks_.size()));
    if (seen) {
      stacks_.push_back(frames);
    } else {
      stacks_.push_back(owned_.emplace_back(frames.begin(), frames.end()));  // (a moved vector keeps its frames)
    }
  }
  return it->second;
}

void SnapshotSites::add_block(uint64_t id, uint64_t size, std::span<const uint64_t> backtrace) {
  const size_t i = wanted(id);
  if (i == SIZE_MAX) return;
  for (uint32_t s : unhashed_) stack_index_.emplace(format::backtrace_hash(stacks_[s]), s);
  unhashed_.clear();
  stack_plus_one_[i] = stack_of(backtrace) + 1;
  size_[i] = size;
}

void SnapshotSites::add_table_block(uint64_t id, uint64_t size, uint32_t stack, std::span<const uint64_t> backtrace) {
  const size_t i = wanted(id);
  if (i == SIZE_MAX) return;
  if (stack >= by_table_stack_.size()) by_table_stack_.resize(std::max<size_t>(stack + 1, 2 * by_table_stack_.size()), 0);
  uint32_t& known = by_table_stack_[stack];
  if (known == 0) {
    if (backtrace.size() >= format::SnapshotWriter::kMaxAnnexFrames) {
      known = stack_of(backtrace, true) + 1;  // (cut, it may equal another number's frames)
    } else {
      unhashed_.push_back(static_cast<uint32_t>(stacks_.size()));
      stacks_.push_back(backtrace);
      known = static_cast<uint32_t>(stacks_.size());
    }
  }
  stack_plus_one_[i] = known;
  size_[i] = size;
}

bool SnapshotSites::complete() const {
  return std::ranges::find(stack_plus_one_, 0u) == stack_plus_one_.end();
}

BlockSiteViews SnapshotSites::site_views(size_t i) const {
  BlockSiteViews out;
  const std::vector<uint64_t>& ids = alloc_ids_[i];
  out.stack_plus_one.assign(ids.size(), 0);
  out.size.assign(ids.size(), 0);
  std::vector<uint32_t> local_plus_one(stacks_.size(), 0);  // index in stacks_ -> in out.stacks + 1
  for (size_t b = 0; b < ids.size(); ++b) {
    const auto k = static_cast<size_t>(std::lower_bound(ids_.begin(), ids_.end(), ids[b]) - ids_.begin());
    if (stack_plus_one_[k] == 0) continue;  // its Alloc is not in the trace
    uint32_t& local = local_plus_one[stack_plus_one_[k] - 1];
    if (local == 0) {
      out.stacks.push_back(stacks_[stack_plus_one_[k] - 1]);
      local = static_cast<uint32_t>(out.stacks.size());
    }
    out.stack_plus_one[b] = local;
    out.size[b] = size_[k];
  }
  return out;
}

BlockSites SnapshotSites::sites(size_t i) const {
  BlockSiteViews views = site_views(i);
  BlockSites out{{}, std::move(views.stack_plus_one), std::move(views.size)};
  out.stacks.reserve(views.stacks.size());
  for (std::span<const uint64_t> s : views.stacks) out.stacks.emplace_back(s.begin(), s.end());
  return out;
}

std::vector<reader::RawSnapshotThread> SnapshotSites::threads() const {
  std::vector<reader::RawSnapshotThread> out;
  for (const auto& [id, t] : threads_) out.push_back(t);
  return out;
}

}  // namespace memloupe::symbolize
