// ELF files with compressed sections (SHF_COMPRESSED: Debian's -dbg packages'
// separate debug files, a program built with -gz) inflated once and shared by
// every libdw session of one symbolisation. libdw inflates a compressed
// section in each session that reads it, and the finaliser has two sessions
// per file (the frames' and the globals', symbolize/prepared_symbolizers.h):
// libc's debug file (4 MB, 14 MB inflated) was inflated twice per run, ~30 ms
// of zlib each. Here the first session to open such a file inflates it into
// an in-memory copy (a memfd) whose sections are stored uncompressed; every
// session opens that copy, which libelf maps without inflating or copying.
//
// The copy holds the same section contents, headers (but for the inflated
// sections' offset, size, flags and alignment) and program headers as the
// file: what libdw reads from it is what it would have inflated itself.
// Whatever fails (no memfd, a file libelf cannot rewrite) leaves the file to
// be read as it is, inflated by libdw as before.
//
// Copies are also kept on disk between commands (inflated_cache.h): a file
// with a build-id whose entry is there is mapped from it, not inflated; one
// inflated here is written there for the next command.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "format/unique_fd.h"
#include "symbolize/inflated_cache.h"

namespace memloupe::symbolize {

class InflatedFiles {
 public:
  // With the disk cache the environment names, if any
  // (InflatedCache::folder_from_environment).
  InflatedFiles();
  // With `cache` (none: the copies are made in memory only).
  explicit InflatedFiles(std::optional<InflatedCache> cache) : cache_(std::move(cache)) {}
  InflatedFiles(const InflatedFiles&) = delete;
  InflatedFiles& operator=(const InflatedFiles&) = delete;

  // A new descriptor (the caller's) of the inflated copy of the file `fd` is
  // open on, or -1 when it has no compressed section or cannot be inflated.
  // A file is inflated once however many threads ask, and while one does, the
  // others asking for that file wait (they would need it anyway).
  int open_inflated(int fd);
  // The same, for the file at `path` (-1 also when it cannot be opened).
  int open_inflated(const std::string& path);

  // How many files were inflated here (each once), and how many files' copies
  // were read from the disk cache instead.
  size_t inflated() const;
  size_t from_cache() const;

 private:
  struct Copy {
    std::mutex mutex;  // held while it is made
    bool made = false;
    format::UniqueFd image;  // none: nothing to inflate, or it failed
    bool from_cache = false;
  };
  // Makes `copy` of `fd`'s file (`st`): from the disk cache or inflated. The
  // source of a copy inflated here that the disk cache is to keep, if any.
  std::optional<InflatedSource> make(int fd, const struct stat& st, Copy& copy) const;
  size_t count(bool cached) const;

  std::optional<InflatedCache> cache_;  // none: in memory only
  // A file by (device, inode, size, modification time): one rewritten in place
  // during the run is another file.
  using Key = std::tuple<dev_t, ino_t, off_t, long, long>;

  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<Copy>> copies_;  // guarded by mutex_
};

}  // namespace memloupe::symbolize
