#include "finalize/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "format/write_all.h"

namespace memloupe::finalize {
namespace {

Error os_error(const std::string& what, const std::string& path) {
  return Error{what + " " + path + ": " + std::strerror(errno)};
}

std::optional<Error> write_all(int fd, std::span<const uint8_t> bytes, const std::string& path) {
  if (!format::write_all(fd, bytes.data(), bytes.size())) return os_error("cannot write", path);
  return std::nullopt;
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

Expected<AtomicFile> AtomicFile::create(const std::string& path) {
  const std::filesystem::path p(path);
  // Hidden, and unlike any trace name pattern, so a scan for traces written
  // during a run never picks it up.
  std::string temp = (p.parent_path() / ("." + p.filename().string() + ".XXXXXX")).string();
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return os_error("cannot create a file next to", path);
  // mkostemp creates 0600; a trace gets the usual permissions (0666 & ~umask).
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  return AtomicFile(path, std::move(temp), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), temp_(std::move(other.temp_)), fd_(other.fd_) {
  other.fd_ = -1;
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  close(fd_);
  unlink(temp_.c_str());
}

std::optional<Error> AtomicFile::write(std::span<const uint8_t> bytes) { return write_all(fd_, bytes, temp_); }

std::optional<Error> AtomicFile::commit() {
  if (fsync(fd_) != 0) return os_error("cannot sync", temp_);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) return os_error("cannot rename to", path_);
  close(fd_);
  fd_ = -1;
  // The rename itself is durable once the directory is synced.
  const int dir = open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
  return std::nullopt;
}

Expected<AppendedFile> AppendedFile::open(const std::string& path, uint64_t expected_size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return os_error("cannot open for appending", path);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != expected_size) {
    close(fd);
    return Error{path + " is not the regular file of " + std::to_string(expected_size) + " bytes that was read"};
  }
  return AppendedFile(path, fd, expected_size);
}

AppendedFile::AppendedFile(AppendedFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), kept_(other.kept_), size_(other.size_) {
  other.fd_ = -1;
}

AppendedFile::~AppendedFile() {
  if (fd_ < 0) return;
  // Not committed: what was appended goes (best effort: the file's bytes
  // before it are untouched either way).
  if (ftruncate(fd_, static_cast<off_t>(kept_)) != 0) {
    // Nothing better to do: readers stop at the cut-short chunk.
  }
  close(fd_);
}

std::optional<Error> AppendedFile::append(std::span<const uint8_t> bytes) {
  if (auto e = write_all(fd_, bytes, path_)) return e;
  size_ += bytes.size();
  return std::nullopt;
}

std::optional<Error> AppendedFile::commit() {
  if (fsync(fd_) != 0) return os_error("cannot sync", path_);
  close(fd_);
  fd_ = -1;
  return std::nullopt;
}

}  // namespace memloupe::finalize
