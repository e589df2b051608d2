// Running programs under the real preload library and reading their traces back,
// for the recorder's end-to-end tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/events.h"
#include "format/expected.h"
#include "reader/reader.h"
#include "support/child_process.h"

namespace memloupe::recorder_test {

namespace fs = std::filesystem;

fs::path binary(const std::string& name);  // <build>/bin/name
fs::path preload_library();

using test_support::TempDir;  // removed with everything in it at the end of the test

struct RunOptions {
  bool preload = false;              // LD_PRELOAD the recorder
  std::vector<std::string> env;      // NAME=value, added to a clean copy of ours
  fs::path cwd;                      // empty: inherit
  std::chrono::milliseconds timeout{60'000};
};

struct RunResult {
  int wait_status = 0;  // as from waitpid
  std::string out, err;
  bool timed_out = false;
  bool exited(int code) const;
  bool killed_by(int signal) const;
  std::string describe() const;  // for assertion messages
};

// A started program whose stdout/stderr go to files.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const RunOptions& options);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  pid_t pid() const { return child_.pid(); }
  std::string stdout_so_far() const;
  RunResult wait();  // kills it with SIGKILL at the timeout

 private:
  TempDir io_;
  RunOptions options_;
  test_support::Child child_;
  std::optional<RunResult> result_;
};

RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// Everything the tests look at in a trace, copied out of the reader.
struct TraceData {
  struct AllocEvent {
    format::Alloc event;
    std::vector<uint64_t> backtrace;
  };
  format::TraceInfo info;
  std::vector<AllocEvent> allocs;
  std::vector<format::Free> frees;
  std::vector<format::CallTotals> totals;
  std::optional<format::TraceEnd> end;
  std::vector<format::ThreadStart> thread_starts;
  std::vector<uint32_t> thread_ends;
  std::map<uint32_t, std::string> thread_names;
  std::vector<std::string> modules_loaded;
  size_t modules_unloaded = 0;
  size_t rss_samples = 0;
  std::vector<std::string> markers;
  reader::SymbolTable symbols;
  std::optional<Error> error;  // where reading stopped early, if it did
  uint64_t file_size = 0;
  // --all mode, replaying the events in trace order: allocations at an address
  // that a live block still holds, and frees of blocks that are not live. Both
  // must be empty: the trace's order must agree with the allocator's.
  std::vector<std::string> order_errors;

  // From the last CallTotals.
  format::FuncTotal total(format::Func f) const;
  // Alloc/Free events of one function.
  size_t alloc_events(format::Func f) const;
  size_t free_events(format::Func f) const;
  // The innermost-first function names of an address (inlined frames included).
  std::vector<std::string> functions_at(uint64_t address) const;
};

Expected<TraceData> read_trace(const fs::path& path);

// `names` appear in `frames` in this order (not necessarily adjacent).
bool in_order(const std::vector<std::string>& frames, const std::vector<std::string>& names);

// The function name of format::Func, as the trace's dump spells it.
format::Func func_named(std::string_view name);

}  // namespace memloupe::recorder_test
