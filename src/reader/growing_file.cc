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

// Address space reserved for one followed file (no memory: PROT_NONE,
// MAP_NORESERVE). A recorder writes some 4 bytes per --all event; a file past
// this is finalised from the disk after the program ends instead.
constexpr uint64_t kReserve = uint64_t{64} << 30;

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

// Maps the file's first `size` bytes over the start of the reserved range
// (MAP_FIXED replaces the earlier, shorter mapping at the same address; pages
// past the file's end are never mapped, as touching them would fault).
std::optional<Error> GrowingFile::map(uint64_t size) {
  if (size > kReserve) return Error{name() + ": the file grew past what can be followed"};
  if (size <= mapped_) return std::nullopt;
  if (::mmap(base_, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd_, 0) == MAP_FAILED)
    return os_error(name(), "cannot map");
  mapped_ = size;
  return std::nullopt;
}

Expected<bool> GrowingFile::grow() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return os_error(name(), "cannot stat");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < size_) return Error{name() + ": the file shrank while it was followed"};
  if (size == size_) return false;
  if (auto e = map(size)) return *e;
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
  static const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
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
  if (auto e = map(size)) return *e;
  size_ = exposed_ = size;
  return std::nullopt;
}

}  // namespace memloupe::reader
