#include "analysis/alloc_stacks.h"

#include <algorithm>
#include <variant>

namespace memloupe::analysis {

AllocStacksBuilder::AllocStacksBuilder(const format::TraceInfo& info, std::span<const format::AllocId> wanted)
    : overview_(info) {
  ids_.reserve(wanted.size());
  for (format::AllocId id : wanted) ids_.push_back(id.value);
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

// AllocIds come in file order (events.h), so a cursor over the sorted ids finds
// each one in O(1); an id behind the cursor (a hand-made trace) is looked up
// by binary search instead.
bool AllocStacksBuilder::wanted(uint64_t id) {
  if (cursor_ > 0 && id <= ids_[cursor_ - 1]) return std::binary_search(ids_.begin(), ids_.end(), id);
  while (cursor_ < ids_.size() && ids_[cursor_] < id) ++cursor_;
  return cursor_ < ids_.size() && ids_[cursor_] == id;
}

void AllocStacksBuilder::add(const format::Event& event) {
  if (const auto* a = std::get_if<format::Alloc>(&event); a && wanted(a->id.value)) {
    out_.stack_of[a->id.value] = out_.stacks.intern(a->backtrace).first;
  }
  overview_.add(event);
}

AllocStacks AllocStacksBuilder::finish(std::optional<Error> error, reader::SymbolTable symbols) && {
  out_.overview = std::move(overview_).finish(std::move(error));
  out_.symbols = std::move(symbols);
  return std::move(out_);
}

AllocStacks read_alloc_stacks(reader::Reader& reader, std::span<const format::AllocId> wanted) {
  AllocStacksBuilder builder(reader.info(), wanted);
  while (const format::Event* e = reader.next()) builder.add(*e);
  return std::move(builder).finish(reader.error(), reader.symbols());
}

}  // namespace memloupe::analysis
