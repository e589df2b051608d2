// Running the real `memloupe` binary from the analysis suite's end-to-end tests.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace memloupe::analysis_testing {

struct Result {
  int status = -1;  // exit status; -1 if it could not run or was killed
  std::string out, err;
};

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

// A trace's bytes, read or written whole (the tests that damage or rewrite one).
inline std::vector<uint8_t> read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
inline void write_file(const std::string& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Runs `ENV memloupe ARGS` through the shell (ARGS already quoted), capturing
// stdout and stderr; stderr goes through a file in `scratch`, one per process,
// since ctest runs several test processes at once.
inline Result run_memloupe(const std::filesystem::path& scratch, const std::string& args,
                           const std::string& env = "") {
  const std::filesystem::path err = scratch / ("stderr." + std::to_string(::getpid()) + ".txt");
  const std::string command = env + " " + quote(std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe") +
                              " " + args + " 2>" + quote(err.string());
  Result r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  {
    std::ifstream e(err);
    r.err.assign(std::istreambuf_iterator<char>(e), {});
  }
  std::filesystem::remove(err);
  return r;
}

// ctest runs each test in a process of its own, several at once: `record`, which
// records the suite's `traces` into `scratch`, runs under a lock on a file there,
// and only when one of them is missing or older than the binaries that make
// traces; so one process records and the others reuse.
template <class Record>
void record_once(const std::filesystem::path& scratch, const std::vector<std::string>& traces, Record record) {
  namespace fs = std::filesystem;
  fs::create_directories(scratch);
  const int lock = ::open((scratch / "lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  const fs::path bin = fs::path(MEMLOUPE_BINARY_DIR) / "bin";
  fs::file_time_type newest_binary = fs::file_time_type::min();
  for (const char* b : {"memloupe", "libmemloupe_preload.so", "analysis_pattern"})
    newest_binary = std::max(newest_binary, fs::last_write_time(bin / b));
  bool fresh = true;
  for (const std::string& t : traces)
    fresh = fresh && fs::exists(scratch / t) && fs::last_write_time(scratch / t) > newest_binary;
  if (!fresh) record();
  ::close(lock);  // releases the lock
}

}  // namespace memloupe::analysis_testing
