// Writing a file so that readers see either the old file or the complete new
// one, never a half-written one, even if memloupe is killed meanwhile; or, for
// a file whose bytes all stay, appending to it in place.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "format/expected.h"

namespace memloupe::finalize {

// A temporary file next to the destination (same directory, so rename(2) is
// atomic), renamed over the destination by commit(). Until then the
// destination is untouched; without commit() the temporary is removed.
class AtomicFile {
 public:
  static Expected<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  [[nodiscard]] std::optional<Error> write(std::span<const uint8_t> bytes);
  // fsync the data, rename it into place, fsync the directory.
  [[nodiscard]] std::optional<Error> commit();

 private:
  AtomicFile(std::string path, std::string temp, int fd)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd) {}

  std::string path_;
  std::string temp_;
  int fd_ = -1;  // owned; -1 once committed or moved from
};

// A file that keeps its bytes and gets more after them: the finalise of a
// trace whose events stay as the recorder stored them (finalize.cc) appends
// its symbols and index to the trace itself instead of rewriting every byte
// into a new file (on a 10 MB trace that rewrite was a third of what was
// left after the program's exit). Until commit() nothing appended counts: a
// failure, or destruction without commit(), cuts the file back to its size at
// open(). A process killed meanwhile leaves the file as it was with a cut-short
// chunk after it, which readers report as damage after every event (a trace the
// recorder's SIGKILL leaves reads the same way), and which a new finalise
// replaces.
class AppendedFile {
 public:
  // Fails if `path` is not a regular file of exactly `expected_size` bytes
  // (another writer has appended since it was read) or cannot be written.
  static Expected<AppendedFile> open(const std::string& path, uint64_t expected_size);
  AppendedFile(AppendedFile&& other) noexcept;
  AppendedFile& operator=(AppendedFile&&) = delete;
  AppendedFile(const AppendedFile&) = delete;
  ~AppendedFile();

  [[nodiscard]] std::optional<Error> append(std::span<const uint8_t> bytes);
  uint64_t size() const { return size_; }
  // fsync what was appended; from then on it stays.
  [[nodiscard]] std::optional<Error> commit();

 private:
  AppendedFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), kept_(size), size_(size) {}

  std::string path_;
  int fd_ = -1;       // owned; -1 once committed or moved from
  uint64_t kept_ = 0;  // the size at open(), which a failure returns to
  uint64_t size_ = 0;
};

}  // namespace memloupe::finalize
