#include "reader/growing_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "format/chunk.h"
#include "format/wire.h"

namespace memloupe::reader {
namespace {

// Address space reserved for one followed file (no memory until it is read
// into: PROT_NONE, MAP_NORESERVE). A recorder writes some 4 bytes per --all event; a file past
// this is finalised from the disk after the program ends instead.
constexpr uint64_t kReserve = uint64_t{64} << 30;

uint64_t page_size() {
  static const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

Error os_error(const std::string& path, const char* what) {
  return Error{path + ": " + what + ": " + std::strerror(errno)};
}

}  // namespace

Expected<std::unique_ptr<GrowingFile>> GrowingFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_error(path, "cannot open");
  void* base = ::mmap(nullptr, kReserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    Error e = os_error(path, "cannot reserve address space to follow it");
    ::close(fd);
    return e;
  }
  return std::unique_ptr<GrowingFile>(new GrowingFile(path, fd, static_cast<uint8_t*>(base)));
}

GrowingFile::GrowingFile(std::string path, int fd, uint8_t* base) : Bytes(std::move(path)), fd_(fd), base_(base) {}

GrowingFile::~GrowingFile() {
  ::munmap(base_, kReserve);
  ::close(fd_);
}

// Copies the file's bytes up to `size` into the start of the reserved range,
// with pread, not a mapping of the file: a page of a file mapping that the
// file no longer reaches faults with SIGBUS, and another process may shrink
// the file while it is followed (until 2026-11-26 every command of a traced
// bash script truncated the script's trace: docs/RECORDER.md, "Children: fork
// and exec"), which killed memloupe. The copy costs what the mapping's page
// faults did: the follower reads every byte either way, ~2-4 bytes an event.
std::optional<Error> GrowingFile::read_to(uint64_t size) {
  if (size > kReserve) return Error{name() + ": the file grew past what can be followed"};
  if (size <= held_) return std::nullopt;
  const uint64_t page = page_size();
  const uint64_t committed = (size + page - 1) / page * page;
  if (committed > committed_) {
    if (::mprotect(base_ + committed_, committed - committed_, PROT_READ | PROT_WRITE) != 0)
      return os_error(name(), "cannot make room to read it");
    committed_ = committed;
  }
  for (uint64_t at = held_; at < size;) {
    const ssize_t n = ::pread(fd_, base_ + at, size - at, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error(name(), "cannot read");
    if (n == 0) return Error{name() + ": the file shrank while it was followed"};
    at += static_cast<uint64_t>(n);
  }
  held_ = size;
  return std::nullopt;
}

Expected<bool> GrowingFile::grow() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return os_error(name(), "cannot stat");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < size_) return Error{name() + ": the file shrank while it was followed"};
  if (size == size_) return false;
  if (auto e = read_to(size)) return *e;
  size_ = size;
  // Expose the chunks that are whole: hop from header to header.
  const uint64_t before = exposed_;
  uint64_t at = exposed_;
  if (at == 0) {
    if (size < format::kPrologueSize) return false;
    at = format::kPrologueSize;
  }
  while (size - at >= format::kChunkHeaderSize) {
    format::ChunkHeader h;
    if (format::parse_chunk_header(base_ + at, h) != format::ChunkHeaderStatus::Ok) break;  // whole() shows it
    if (size - at - format::kChunkHeaderSize < h.stored_len) break;                          // not all written yet
    at += format::kChunkHeaderSize + h.stored_len;
  }
  if (at > format::kPrologueSize || exposed_ != 0) exposed_ = std::max(exposed_, at);
  return exposed_ != before;
}

void GrowingFile::start_writeback() {
  // Whole pages only: the writer's next chunk lands in the last one, which
  // would go to the disk twice (and a write to a page under writeback may wait).
  const uint64_t page = page_size();
  const uint64_t end = exposed_ / page * page;
  if (end <= written_back_) return;
  ::sync_file_range(fd_, static_cast<off_t>(written_back_), static_cast<off_t>(end - written_back_),
                    SYNC_FILE_RANGE_WRITE);
  written_back_ = end;
}

std::optional<Error> GrowingFile::whole() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return os_error(name(), "cannot stat");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < size_) return Error{name() + ": the file shrank while it was followed"};
  if (auto e = read_to(size)) return *e;
  size_ = exposed_ = size;
  return std::nullopt;
}

}  // namespace memloupe::reader
