#include "report/frame_names.h"

#include <cstdio>

namespace memloupe::report {

std::string frame_name(const Profile& profile, const Location& location, const SourceFrame* frame) {
  if (frame != nullptr && !frame->function.empty()) return frame->function;
  char buf[64];
  if (location.mapping && location.mapping->value < profile.mappings.size()) {
    const Mapping& m = profile.mappings[location.mapping->value];
    std::string base = m.path.substr(m.path.find_last_of('/') + 1);
    std::snprintf(buf, sizeof buf, "+0x%llx]",
                  static_cast<unsigned long long>(location.address - m.start + m.file_offset));
    return "[" + base + buf;
  }
  std::snprintf(buf, sizeof buf, "[0x%llx]", static_cast<unsigned long long>(location.address));
  return buf;
}

std::vector<std::string> stack_names_root_first(const Profile& profile, const Site& site) {
  std::vector<std::string> names;
  for (auto it = site.stack.rbegin(); it != site.stack.rend(); ++it) {
    const Location& loc = profile.location(*it);
    if (loc.frames.empty()) {
      names.push_back(frame_name(profile, loc, nullptr));
      continue;
    }
    // frames are innermost first; the outermost (the real function) comes first here.
    for (auto f = loc.frames.rbegin(); f != loc.frames.rend(); ++f) {
      names.push_back(frame_name(profile, loc, &*f));
    }
  }
  return names;
}

}  // namespace memloupe::report
