// Freeing what one finalise built, when the process exits right after it
// (`memloupe run`), is time the user waits for and the OS does faster: the
// symbol table's strings, the collected addresses, libdw's trees of the
// prepared symbolisers, the analysis index's tables are hundreds of thousands
// of small blocks, whose free() and malloc_consolidate() cost ~15 ms after
// cc1plus's exit (docs/RECORDER.md, "Finalising while the program runs", the
// fourth round). Handed here, they stay reachable from a static pointer (so a
// leak checker does not report them) and are never destroyed. (The exit's own
// unmapping of all of it is then left to a helper: memory_after_exit.h.)
#pragma once

#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

namespace memloupe::finalize {

namespace detail {
struct KeptUntilExit {
  std::mutex mutex;
  std::vector<std::shared_ptr<void>> kept;
};
// Never deleted: the point is that exit() does not run its destructor.
inline KeptUntilExit& kept_until_exit_list() {
  static KeptUntilExit* const list = new KeptUntilExit;
  return *list;
}
}  // namespace detail

template <class T>
void keep_until_exit(T&& value) {
  auto held = std::make_shared<std::decay_t<T>>(std::forward<T>(value));
  detail::KeptUntilExit& list = detail::kept_until_exit_list();
  const std::lock_guard lock(list.mutex);
  list.kept.push_back(std::move(held));
}

}  // namespace memloupe::finalize
