// Finalising traces from the command line (`memloupe run`, `memloupe
// symbolize`), with what happened said on stderr:
//   memloupe: warning: cannot symbolise LIB: REASON      (once per module file)
//   memloupe: warning: INPUT: DAMAGE; kept the N events before it
//   memloupe: types: N of M allocation sites typed (P% of bytes), S s   (src/types/)
//   memloupe: analysis index: N bytes                     (src/analysis/index.h)
//   memloupe: wrote OUTPUT (N events, M bytes)
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "analysis/index.h"
#include "finalize/finalize.h"
#include "format/events.h"

namespace memloupe::cli {

// Returns kOk, kDamaged (written, but the input was cut short or damaged) or
// kFailed (nothing written; the input is unchanged). `index`: whether to build
// the analysis index on the finaliser's reads and append it (analysis/index.h:
// by default when the trace has enough events for it to pay). `with_types`: also
// infer the allocation sites' types and append the types table (src/types/).
int finalize_and_report(const std::string& input, const std::string& output, finalize::FinalizeOptions options,
                        analysis::IndexWhen index = analysis::IndexWhen::IfItPays, bool with_types = true);

// The help of `run`'s and `symbolize`'s --index (IndexWhen::Always).
std::string index_flag_help();

// `memloupe run`'s finalising of the launched program's trace: begun while the
// program runs (the events are read as they are written, finalize/follow.h),
// finished once it has exited. Prints what finalize_and_report prints; when
// the trace could not be followed it is finalised as finalize_and_report does.
class FollowingFinaliser {
 public:
  // Starts following `raw`; `written` as for finalize::TraceFollower; `index`
  // as for finalize_and_report (never Never: `run --no-index` does not exist).
  FollowingFinaliser(std::string raw, std::function<bool()> written, analysis::IndexWhen index);
  ~FollowingFinaliser();
  FollowingFinaliser(const FollowingFinaliser&) = delete;
  FollowingFinaliser& operator=(const FollowingFinaliser&) = delete;
  const std::string& raw() const { return raw_; }
  // The program has exited: finalises `raw` into `output`. Returns as finalize_and_report.
  int finish(const std::string& output);
  // After finish() wrote the output from the follower's read, which saw every
  // event the output keeps: how the trace ended (its TraceEnd's reason, nothing
  // if it has none), so that `run` need not read the file it has just written
  // (run_exec_chain.h). nullptr otherwise.
  const std::optional<format::EndReason>* end_reason() const;

 private:
  struct Parts;
  std::string raw_;
  analysis::IndexWhen index_;
  std::unique_ptr<Parts> parts_;
  bool ended_known_ = false;
};

// For a trace left as the recorder wrote it: counts its events and prints the
// "wrote" line (and its damage, if any). Returns kOk or kDamaged.
int report_unfinalized(const std::string& path);

}  // namespace memloupe::cli
