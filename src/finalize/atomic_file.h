// Writing a file so that readers see either the old file or the complete new
// one, never a half-written one, even if memloupe is killed meanwhile.
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

}  // namespace memloupe::finalize
