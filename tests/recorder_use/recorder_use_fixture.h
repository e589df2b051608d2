// What the recorder-use tests share: a directory to run `memloupe run` in,
// scripts written there, and a trace's facts read back with the real reader.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "reader/reader.h"
#include "run_fixture.h"

namespace memloupe::testing {

struct TraceSummary {
  std::string executable;
  std::optional<format::EndReason> end;
  std::vector<format::Alloc> allocs;  // backtraces dropped
  std::vector<format::Free> frees;
  std::optional<format::CallTotals> totals;  // the last
  std::optional<std::string> error;

  size_t allocs_of(format::Func f) const {
    size_t n = 0;
    for (const auto& a : allocs) n += a.func == f;
    return n;
  }
  size_t frees_of(format::Func f) const {
    size_t n = 0;
    for (const auto& e : frees) n += e.func == f;
    return n;
  }
  uint64_t calls(format::Func f) const { return totals ? totals->totals[static_cast<unsigned>(f)].calls : 0; }

  size_t allocs_between(uint64_t lo, uint64_t hi) const {
    size_t n = 0;
    for (const auto& a : allocs) n += a.size >= lo && a.size <= hi;
    return n;
  }
};

inline TraceSummary summarize(const std::string& path) {
  TraceSummary s;
  auto r = reader::Reader::open(path);
  if (!r) {
    s.error = r.error().message;
    ADD_FAILURE() << path << ": " << *s.error;
    return s;
  }
  s.executable = (*r)->info().executable;
  while (const format::Event* e = (*r)->next()) {
    if (const auto* a = std::get_if<format::Alloc>(e)) {
      s.allocs.push_back(*a);
      s.allocs.back().backtrace = {};
    } else if (const auto* fr = std::get_if<format::Free>(e)) {
      s.frees.push_back(*fr);
    } else if (const auto* t = std::get_if<format::CallTotals>(e)) {
      s.totals = *t;
    } else if (const auto* end = std::get_if<format::TraceEnd>(e)) {
      s.end = end->reason;
    }
  }
  if ((*r)->error()) s.error = (*r)->error()->message;
  return s;
}

// The interpreter itself (python3 may be a pyenv shim that execs it).
inline std::string python_executable() {
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen("python3 -c 'import sys; print(sys.executable)'", "r"), ::pclose);
  char buf[4096] = {};
  if (!p || !std::fgets(buf, sizeof buf, p.get())) return "";
  std::string s(buf);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class RecorderUse : public Run {
 protected:
  // An executable /bin/sh script in the test's directory; returns its path.
  std::string write_script(const std::string& name, const std::string& body, const std::string& shell = "/bin/sh") {
    const std::string path = dir_ / name;
    std::ofstream(path) << "#!" << shell << "\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
  }
  // FIRST, FIRST.1, FIRST.2, ... as far as they exist: one exec chain's traces.
  std::vector<std::string> exec_chain(const std::string& first) const {
    std::vector<std::string> out;
    for (unsigned n = 0;; ++n) {
      const std::string name = n == 0 ? first : first + "." + std::to_string(n);
      if (!std::filesystem::exists(dir_ / name)) return out;
      out.push_back(name);
    }
  }
};

}  // namespace memloupe::testing
