// `memloupe run`: where the traces go, and finding them after the run.
//
// The preload library writes to MEMLOUPE_OUTPUT with "%p" replaced by the
// writing process's pid. The launcher always hands it an absolute path (the
// program may chdir) and, when children are traced (--follow-fork), a pattern
// with "%p" in the file name, so each process gets its own file:
//
//   -o given?  contains %p?  --follow-fork   MEMLOUPE_OUTPUT     launched process's trace
//   no         -             any             $PWD/memloupe.PROG.%p.trace   (pattern, its pid)
//   yes        yes           any             FILE                (pattern, its pid)
//   yes        no            no              FILE                FILE
//   yes        no            yes             FILE.%p             FILE (renamed from FILE.PID)
//
// Children's traces (--follow-fork) are the files matching the pattern that
// were created or rewritten during the run, including the "NAME.1", "NAME.2"
// the recorder gives images exec'd by a traced process (same pid).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "format/expected.h"

namespace memloupe::cli {

struct OutputPlan {
  std::string pattern;         // absolute; for MEMLOUPE_OUTPUT
  std::optional<std::string> fixed_output;  // the launched process's final path, when not pattern-named
};

// `output` is -o (empty if not given), `program` the program as typed. An
// error, too, when a live traced process is writing the file -o names.
Expected<OutputPlan> plan_output(const std::string& output, const std::string& program,
                                 bool follow_fork);

// The pattern with "%p" replaced by `pid`.
std::string expand(const std::string& pattern, pid_t pid);

// What files matching a pattern looked like before the run, to tell the ones
// the run wrote from leftovers of earlier runs.
class TraceFiles {
 public:
  // Records the matching files that exist now.
  explicit TraceFiles(std::string pattern);
  // Matching files created or modified since construction, sorted.
  std::vector<std::string> written_since() const;
  // Whether `path` was created or modified since construction.
  bool written(const std::string& path) const;

 private:
  struct Stamp {
    uint64_t inode = 0;
    int64_t mtime_ns = 0;
    uint64_t size = 0;
    bool operator==(const Stamp&) const = default;
  };
  static std::optional<Stamp> stamp(const std::string& path);
  std::vector<std::string> matching() const;

  std::string pattern_;
  std::map<std::string, Stamp> before_;
};

}  // namespace memloupe::cli
