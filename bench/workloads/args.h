// Minimal `--name value` parsing for the workload programs (no dependencies, so the
// programs stay plain C++ that any profiler can run).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace bench {

struct Option {
  const char* name;  // without the leading "--"
  uint64_t* value;
  const char* help;
};

// Fills the options named on the command line; prints usage and exits on anything else.
inline void parse_args(int argc, char** argv, std::initializer_list<Option> options) {
  auto usage = [&](int status) {
    std::fprintf(status ? stderr : stdout, "usage: %s", argv[0]);
    for (const Option& o : options) {
      std::fprintf(status ? stderr : stdout, " [--%s N]", o.name);
    }
    std::fputc('\n', status ? stderr : stdout);
    for (const Option& o : options) {
      std::fprintf(status ? stderr : stdout, "  --%-12s %s (default %llu)\n", o.name, o.help,
                   static_cast<unsigned long long>(*o.value));
    }
    std::exit(status);
  };
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) usage(0);
    bool matched = false;
    for (const Option& o : options) {
      if (argv[i][0] == '-' && argv[i][1] == '-' && std::strcmp(argv[i] + 2, o.name) == 0 &&
          i + 1 < argc) {
        char* end = nullptr;
        *o.value = std::strtoull(argv[++i], &end, 0);
        matched = end && *end == '\0';
      }
    }
    if (!matched) usage(2);
  }
}

}  // namespace bench
