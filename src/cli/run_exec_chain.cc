#include "cli/run_exec_chain.h"

#include <fmt/format.h>

#include <variant>

#include "analysis/index.h"
#include "reader/bytes.h"
#include "reader/reader.h"

namespace memloupe::cli {

std::string exec_chain_path(const std::string& first, unsigned n) {
  return n == 0 ? first : fmt::format("{}.{}", first, n);
}

std::optional<format::EndReason> trace_end_reason(const std::string& path) {
  auto r = reader::Reader::open(path);
  if (!r) return std::nullopt;
  if (auto bytes = reader::Bytes::map_file(path)) {
    analysis::IndexLookup found = analysis::find_index((*bytes)->data(), (*r)->info());
    if (found.index) return found.index->overview.end_reason;
  }
  // No index (a raw trace, --no-symbolize, or one too big to index): the
  // TraceEnd is the last event, so every event is read. A trace that ended at an
  // exec is usually a wrapper's, a few events long.
  std::optional<format::EndReason> reason;
  while (const format::Event* e = (*r)->next()) {
    if (const auto* end = std::get_if<format::TraceEnd>(e)) reason = end->reason;
  }
  return reason;
}

std::optional<std::string> exec_end_warning(const std::string& path, std::optional<format::EndReason> reason,
                                            bool followed) {
  if (reason != format::EndReason::Exec) return std::nullopt;
  if (!followed) {
    return fmt::format("{} ended when the program exec'd another one, which was not traced "
                       "(--no-follow-exec); the rest of the run is not in any trace", path);
  }
  return fmt::format("{} ended when the program exec'd another one, which recorded nothing (a "
                     "static binary, an exec with a cleaned environment, or a program that "
                     "removed LD_PRELOAD); the rest of the run is not in any trace", path);
}

}  // namespace memloupe::cli
