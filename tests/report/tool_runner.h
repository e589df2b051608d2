// Running the real tools (go tool pprof, ms_print, node + chromium, memloupe)
// from the report tests.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>

namespace memloupe::report::testing {

struct Run {
  int status = -1;  // exit status, or -1 if it could not run / was killed
  std::string out;  // stdout (stderr goes to the test's log unless redirected in `command`)
};

// Runs `command` through /bin/sh and captures its stdout.
inline Run run(const std::string& command) {
  Run r;
  struct Closer {
    void operator()(FILE* f) const {
      if (f) pclose(f);
    }
  };
  FILE* raw = popen(command.c_str(), "r");
  if (!raw) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, raw)) > 0) r.out.append(buf, n);
  int status = pclose(raw);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// True if `name` is found on PATH.
inline bool on_path(const std::string& name) { return run("command -v " + name + " >/dev/null 2>&1").status == 0; }

// "key=value" lines into a map (the output of browser_check.mjs).
inline std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

// A fresh directory under the build tree for one test's files.
inline std::string scratch_dir(const std::string& name) {
  std::string dir = std::string(MEMLOUPE_BINARY_DIR) + "/tests/report/scratch/" + name;
  run("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  return dir;
}

}  // namespace memloupe::report::testing
