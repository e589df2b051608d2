#include "reader/bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "format/unique_fd.h"

namespace memloupe::reader {
namespace {

Error os_error(const std::string& path, const char* what) {
  return Error{path + ": " + what + ": " + std::strerror(errno)};
}

class MappedBytes final : public Bytes {
 public:
  MappedBytes(std::string name, void* addr, size_t size)
      : Bytes(std::move(name)), addr_(addr), size_(size) {}
  ~MappedBytes() override {
    if (size_ != 0) ::munmap(addr_, size_);
  }
  std::span<const uint8_t> data() const override {
    return {static_cast<const uint8_t*>(addr_), size_};
  }

 private:
  void* addr_;
  size_t size_;
};

class VectorBytes final : public Bytes {
 public:
  VectorBytes(std::vector<uint8_t> bytes, std::string name)
      : Bytes(std::move(name)), bytes_(std::move(bytes)) {}
  std::span<const uint8_t> data() const override { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// The bytes of a stream (FIFO, pipe, `<(...)`), shared by every open of its path.
class SharedBytes final : public Bytes {
 public:
  SharedBytes(std::shared_ptr<const std::vector<uint8_t>> bytes, std::string name)
      : Bytes(std::move(name)), bytes_(std::move(bytes)) {}
  std::span<const uint8_t> data() const override { return *bytes_; }

 private:
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
};

// A FIFO or pipe cannot be mapped (its size is 0) and can be read only once,
// where a command opens its trace more than once (to check it, then to analyse
// it): the first open reads it to the end and later opens of the same path in
// this process get the same bytes, without opening it again (which would wait
// for a writer that is gone).
Expected<std::unique_ptr<Bytes>> read_stream(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> streams;
  std::lock_guard lock(mutex);
  auto& bytes = streams[path];
  if (!bytes) {
    format::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return os_error(path, "cannot open");
    auto read = std::make_shared<std::vector<uint8_t>>();
    uint8_t buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return os_error(path, "cannot read");
      if (n == 0) break;
      read->insert(read->end(), buffer, buffer + n);
    }
    bytes = std::move(read);
  }
  return std::unique_ptr<Bytes>(new SharedBytes(bytes, path));
}

}  // namespace

Expected<std::unique_ptr<Bytes>> Bytes::map_file(const std::string& path) {
  struct stat named;
  if (::stat(path.c_str(), &named) == 0 && (S_ISFIFO(named.st_mode) || S_ISCHR(named.st_mode) || S_ISSOCK(named.st_mode))) {
    return read_stream(path);
  }
  format::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return os_error(path, "cannot open");
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return os_error(path, "cannot stat");
  if (S_ISDIR(st.st_mode)) return Error{path + ": is a directory"};
  const size_t size = static_cast<size_t>(st.st_size);
  void* addr = nullptr;
  if (size != 0) {
    addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (addr == MAP_FAILED) return os_error(path, "cannot map");
  }
  return std::unique_ptr<Bytes>(new MappedBytes(path, addr, size));
}

std::unique_ptr<Bytes> Bytes::from_vector(std::vector<uint8_t> bytes, std::string name) {
  return std::make_unique<VectorBytes>(std::move(bytes), std::move(name));
}

}  // namespace memloupe::reader
