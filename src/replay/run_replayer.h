// Running memloupe-replayer once, in a fresh process with one allocator
// preloaded, and reading back what it measured.
#pragma once

#include <string>

#include "format/expected.h"
#include "replay/measurements.h"

namespace memloupe::replay {

// A prepared op file held in an anonymous memory file (memfd), which each
// replayer child inherits and opens as /proc/self/fd/N. Owns the descriptor.
class OpFile {
 public:
  static Expected<OpFile> create();
  OpFile(OpFile&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  OpFile& operator=(OpFile&&) = delete;
  ~OpFile();
  int fd() const { return fd_; }
  std::string child_path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  explicit OpFile(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Runs `replayer` on `ops` with LD_PRELOAD=`library` (none if empty; an
// inherited LD_PRELOAD is dropped either way, so only that allocator is in the
// process). Its stderr passes through. Errors say how the child ended: a
// signal (an allocator crash, the OOM killer), a non-zero exit, or running
// past `timeout_s` (an allocator that deadlocks): then it is killed.
Expected<Measurements> run_replayer(const std::string& replayer, const OpFile& ops, const std::string& library,
                                    double timeout_s = 3600);

}  // namespace memloupe::replay
