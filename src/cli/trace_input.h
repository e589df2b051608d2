// Opening a trace for a command, with the messages and exit codes every
// command shares (commands.h):
//   missing or unreadable file        -> kNoInput,   "memloupe: cannot open 'X': <reason>"
//   not a trace, newer version, a
//   header that cannot be read        -> kNotATrace, "memloupe: X: <reader's message>"
//   damage found while reading events -> kDamaged,   "memloupe: X: <message naming the offset>"
//                                        (after the command used everything before it)
#pragma once

#include <memory>
#include <string>

#include "reader/reader.h"

namespace memloupe::cli {

// Opens `path`. On failure prints the reason on stderr, sets `exit_code` and
// returns nullptr.
std::unique_ptr<reader::Reader> open_trace(const std::string& path, int& exit_code);

// "memloupe: PATH: message" on stderr (after what stdout has so far), without
// repeating the path when the message starts with it.
void complain(const std::string& path, const std::string& message);

// Call after reading: if the reader stopped at damage, prints it on stderr and
// returns kDamaged; otherwise returns kOk.
int report_damage(const reader::Reader& reader, const std::string& path);

}  // namespace memloupe::cli
