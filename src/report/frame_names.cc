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

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string short_function_name(std::string_view name) {
  static constexpr std::string_view kAnonymous = "(anonymous namespace)";
  std::string out;
  // Depths of the template argument list or parameter list being dropped; at
  // most one is non-zero. Inside a dropped list only its own brackets count, so
  // "<void (*)(int)>" and "(std::vector<int>)" are skipped whole.
  size_t angles = 0, parens = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (angles > 0) {
      angles += c == '<';
      angles -= c == '>';
      continue;
    }
    if (parens > 0) {
      parens += c == '(';
      parens -= c == ')';
      if (parens == 0) out += ')';
      continue;
    }
    if (c == '(' && name.substr(i).starts_with(kAnonymous)) {
      out += kAnonymous;
      i += kAnonymous.size() - 1;
    } else if (c == '<' && !ends_with(out, "operator") && !ends_with(out, "operator<")) {
      out += "<…>";  // "operator<< <…>" keeps its operator: the demangler puts a space before the arguments
      angles = 1;
    } else if (c == '(' && i + 1 < name.size() && name[i + 1] != ')') {
      out += '(';
      parens = 1;
    } else {
      out += c;
    }
  }
  if (parens > 0) out += ')';
  return out;
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
