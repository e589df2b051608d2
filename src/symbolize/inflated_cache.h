// The inflated copies of compressed debug files kept on disk between commands
// (InflatedFiles' second level, inflated_files.h). Inflating libc's debug
// file (libc6-dbg's zlib sections, 4 MB -> 14 MB) cost every `memloupe run`
// ~75 ms of CPU; a later command maps the copy an earlier one wrote instead.
//
// Decisions (docs/RUNNING.md, "Finalising, in detail"):
// - Where: `$MEMLOUPE_CACHE_DIR` if set (`off` or empty: no disk cache, only
//   the command's in-memory copy); else `$XDG_CACHE_HOME/memloupe` (an
//   absolute one), else `$HOME/.cache/memloupe`; in its `inflated/` folder,
//   made 0700 where missing.
// - Key: the compressed file's build-id, size and modification time (a file
//   replaced by another build or rewritten never meets the old copy). Files
//   without a build-id are not cached.
// - Integrity: an entry is written to a temporary file in the folder and
//   renamed into place (concurrent commands: the last rename wins, both
//   entries are right). After its ELF bytes comes a trailer (libelf and libdw
//   read nothing past the sections and headers they are pointed at): a magic,
//   the ELF bytes' length, the source's size and modification time, and the
//   CRC-32C of the ELF bytes. An entry whose trailer or CRC does not match is
//   removed (and made again by the inflating that follows): a torn or damaged
//   entry never gives other symbols.
// - Bound: after an entry is written, the least recently used entries (the
//   oldest modification time; a hit touches its entry) are removed until the
//   folder holds less than 1 GiB.
// - Beside an inflated copy: the table of a debug file's global variables
//   (global_lines.h; `.globals`, the same trailer and bound), keyed by the
//   file the DIEs are read from, compressed or not.
// - Failure of any kind (no HOME, a folder that cannot be written, a full
//   disk) only means no entry: the cache never changes a result nor fails a
//   command.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "format/unique_fd.h"

struct stat;

namespace memloupe::symbolize {

// A file's modification time in nanoseconds.
int64_t mtime_ns(const struct stat& st);

// The compressed file an entry was made from.
struct InflatedSource {
  std::vector<uint8_t> build_id;  // never empty
  uint64_t size = 0;
  int64_t mtime_ns = 0;

  // The file with `build_id` whose status is `st`.
  static InflatedSource of(std::vector<uint8_t> build_id, const struct stat& st);
};

class InflatedCache {
 public:
  static constexpr uint64_t kDefaultBound = uint64_t{1} << 30;

  // The folder the environment names (see above; `lookup` is getenv's
  // stand-in), or none when the disk cache is off or no folder is named.
  static std::optional<std::filesystem::path> folder_from_environment(
      const std::function<const char*(const char*)>& lookup);

  // The cache in the folder the environment names, if any.
  static std::optional<InflatedCache> from_environment();

  // Entries in `folder` (made when the first entry is written), the folder
  // kept under `bound` bytes.
  explicit InflatedCache(std::filesystem::path folder, uint64_t bound = kDefaultBound);

  // The intact entry of `source`, open for reading (the ELF bytes at its
  // start), and touched; none on a miss. A damaged entry is removed.
  format::UniqueFd find(const InflatedSource& source) const;
  // Writes `image` (an inflated copy of `source`, from its start to its end)
  // as `source`'s entry, then keeps the folder under the bound. False when
  // it could not (nothing is left behind).
  bool store(const InflatedSource& source, int image) const;

  // The intact globals table of `source` (global_lines.h), touched; none on a
  // miss. A damaged one is removed.
  std::optional<std::vector<uint8_t>> find_globals(const InflatedSource& source) const;
  // Writes `table` as `source`'s globals table (as store()).
  bool store_globals(const InflatedSource& source, std::span<const uint8_t> table) const;

  const std::filesystem::path& folder() const { return folder_; }
  // The path of `source`'s entry (an inflated copy, or `kGlobals`: its globals table).
  static constexpr std::string_view kInflated = ".debug";
  static constexpr std::string_view kGlobals = ".globals";
  std::filesystem::path entry(const InflatedSource& source, std::string_view kind = kInflated) const;

 private:
  // `bytes` and their trailer written to a temporary file renamed to `path`,
  // then the folder kept under the bound.
  bool write_entry(const std::filesystem::path& path, const InflatedSource& source,
                   std::span<const uint8_t> bytes) const;
  // The intact entry at `path` made from `source`, open and touched (its
  // bytes before the trailer copied into `bytes` if given); none on a miss.
  // A damaged entry is removed.
  format::UniqueFd open_entry(const std::filesystem::path& path, const InflatedSource& source,
                              std::vector<uint8_t>* bytes = nullptr) const;
  void keep_under_bound() const;

  std::filesystem::path folder_;
  uint64_t bound_;
};

}  // namespace memloupe::symbolize
