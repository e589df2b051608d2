// The fixtures of the `memloupe run` tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "process.h"
#include "reader/reader.h"

namespace memloupe::testing {

// Runs memloupe in a fresh directory.
class Launch : public ::testing::Test {
 protected:
  Finished run(std::vector<std::string> args, const std::string& input = "",
               const Environment& env = {}) {
    args.insert(args.begin(), memloupe_exe());
    return run_process(args, dir_.path(), input, env);
  }
  // Files other than the test's own helpers (hidden) and markers.
  std::vector<std::string> traces() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
      const std::string name = e.path().filename().string();
      if (name.find(".trace") != std::string::npos && name[0] != '.') out.push_back(name);
    }
    std::ranges::sort(out);
    return out;
  }
  TempDir dir_;
};

// Tests that need the preload library to load into the program.
class Run : public Launch {
 protected:
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    // An ASan-instrumented preload library cannot be preloaded into ordinary
    // programs (ASan must be the first library loaded).
    GTEST_SKIP() << "needs a preload library without AddressSanitizer";
#endif
  }
};

inline std::unique_ptr<reader::Reader> open_or_fail(const std::string& path) {
  auto r = reader::Reader::open(path);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? std::move(*r) : nullptr;
}

}  // namespace memloupe::testing
