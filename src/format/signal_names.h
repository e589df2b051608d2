// The signals a heap snapshot may be asked for with (MEMLOUPE_SNAPSHOT_SIGNAL,
// `memloupe run --snapshot-signal`, `memloupe snapshot PID`): one parser for
// the recorder and the CLI. No heap (the recorder reads its configuration
// inside the first malloc).
#pragma once

#include <optional>
#include <string_view>

namespace memloupe::format {

// "USR2", "SIGUSR2" or a number from 1 to 64: the signal's number, unless it is
// one a snapshot may not be taken on (SIGKILL and SIGSTOP cannot be caught; the
// synchronous faults and SIGABRT belong to the program).
constexpr std::optional<int> parse_signal(std::string_view text) noexcept {
  struct Named {
    std::string_view name;
    int number;
  };
  // The asynchronous signals a user may reasonably send (numbers as on Linux x86-64).
  constexpr Named kNames[] = {{"HUP", 1},    {"INT", 2},     {"QUIT", 3},   {"USR1", 10},
                              {"USR2", 12},  {"PIPE", 13},   {"ALRM", 14},  {"TERM", 15},
                              {"CHLD", 17},  {"CONT", 18},   {"TSTP", 20},  {"URG", 23},
                              {"XCPU", 24},  {"XFSZ", 25},   {"VTALRM", 26}, {"PROF", 27},
                              {"WINCH", 28}, {"IO", 29},     {"PWR", 30}};
  if (text.starts_with("SIG")) text.remove_prefix(3);
  for (const Named& n : kNames)
    if (n.name == text) return n.number;
  if (text.empty() || text.size() > 2) return std::nullopt;
  int number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    number = number * 10 + (c - '0');
  }
  switch (number) {
    case 0: case 4: case 5: case 6: case 7: case 8: case 9: case 11: case 19: case 31:
      return std::nullopt;
    default:
      return number <= 64 ? std::optional<int>(number) : std::nullopt;
  }
}

}  // namespace memloupe::format
