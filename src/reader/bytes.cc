#include "reader/bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memloupe::reader {
namespace {

// Owns a file descriptor for the duration of map_file.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

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

Error os_error(const std::string& path, const char* what) {
  return Error{path + ": " + what + ": " + std::strerror(errno)};
}

}  // namespace

Expected<std::unique_ptr<Bytes>> Bytes::map_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
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
