// How the retention views name what a snapshot holds: each block's allocation
// site (its backtrace, read from the trace's Alloc event, with frames named as
// in every other view) and each root (kind; symbol, or function and thread;
// module; file:line).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/alloc_stacks.h"
#include "analysis/model.h"
#include "report/text_sites.h"
#include "retention/heap_graph.h"
#include "types/type_table.h"

namespace memloupe::report {

// Blocks whose backtraces have the same functions, frame by frame, make one
// site (the grouping `top` uses by default).
struct RetentionSite {
  std::vector<analysis::Frame> frames;  // innermost first; empty: unknown
  std::string key;                      // the functions, joined
};

// The C++ type live blocks count under (the trace's types table, by each
// block's innermost return address, as `memloupe types` counts them).
struct RetentionType {
  std::string name;  // analysis::type_row_name
  bool known = false;
  uint64_t type_size = 0;  // sizeof(T) when known
};

// How sites read, as in every text view (cli/text_options.h).
struct SiteStyle {
  bool full_names = false;  // --full-names
  bool all_frames = false;  // --all-frames: a site's first line is its innermost frame, not its first own one
  uint32_t depth = 0;       // --depth: a site is its innermost N frames (inlined ones count; 0: all)
};

class RetentionNames {
 public:
  static constexpr uint32_t kUnknownSite = UINT32_MAX;

  // `types`: the trace's types table (null or empty: every block's type is unknown).
  RetentionNames(const retention::HeapSnapshot& snapshot, const analysis::AllocStacks& stacks,
                 const SiteStyle& style, const types::TypeTable* types = nullptr);

  uint32_t site_of(uint32_t block) const { return site_of_block_[block]; }
  // The block's type row (an index into types()) and the objects (elements of
  // a buffer) it holds: 1 for a block of unknown type.
  uint32_t type_of(uint32_t block) const { return type_of_block_[block].type; }
  uint64_t objects_of(uint32_t block) const { return type_of_block_[block].objects; }
  const std::vector<RetentionType>& types() const { return types_; }
  const std::vector<RetentionSite>& sites() const { return sites_; }
  // The site's first line as the text views print it (its innermost frame
  // outside the allocator and the standard library, unless all_frames);
  // "(unknown site)".
  std::string site_label(uint32_t site) const;
  // The lines under it (at most `frames` in all, 0: all; report::stack_lines).
  std::vector<std::string> site_callers(uint32_t site, size_t frames) const;
  // "thread 2 (worker)", or "thread 2".
  std::string thread_label(format::ThreadId thread) const;
  // "fill_buffer [thread 1 (main)]", "g_map", "registers [thread 3]".
  std::string root_label(const retention::Root& root) const;
  // Where it lives: "prog  src/a.cc:12" (module file name, source file and line).
  std::string root_where(const retention::Root& root) const;
  bool full_names() const { return style_.full_names; }

 private:
  StackLines lines(uint32_t site, size_t frames) const;

  std::vector<uint32_t> site_of_block_;
  std::vector<RetentionSite> sites_;
  struct BlockType {
    uint32_t type = 0;
    uint64_t objects = 1;
  };
  std::vector<BlockType> type_of_block_;
  std::vector<RetentionType> types_;
  std::vector<std::string> threads_;
  SiteStyle style_;
};

// "global", "stack", "register", "tls": the JSON kinds and the text views' column.
const char* root_kind_name(retention::RootKind kind);

}  // namespace memloupe::report
