#include "types/type_names.h"

namespace memloupe::types {
namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";

// Calls f(i, c) for every character outside <...> and (...) nesting, skipping
// "(anonymous namespace)" and the brackets of "operator<"-like names;
// f returns false to stop.
template <class F>
void top_level(std::string_view s, F f) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i).starts_with(kAnonymous)) {
      i += kAnonymous.size() - 1;
      continue;
    }
    if (s.substr(i).starts_with("operator")) {
      // "operator<", "operator()", "operator<<": the brackets are the name's own.
      size_t j = i + 8;
      while (j < s.size() && std::string_view("<>()[]=!+-*/%&|^~,").find(s[j]) != std::string_view::npos &&
             !(s[j] == '(' && j + 1 < s.size() && s[j + 1] != ')'))
        ++j;
      i = j - 1;
      continue;
    }
    const char c = s[i];
    if (depth == 0 && !f(i, c)) return;
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
  }
}

}  // namespace

std::string_view qualified_name(std::string_view function) {
  size_t paren = function.size();
  size_t start = 0;
  top_level(function, [&](size_t i, char c) {
    if (c == '(') {
      paren = i;
      return false;
    }
    if (c == ' ') start = i + 1;  // a return type before the name
    return true;
  });
  return function.substr(start, paren - start);
}

std::vector<std::string_view> components(std::string_view qualified) {
  std::vector<std::string_view> out;
  size_t from = 0;
  top_level(qualified, [&](size_t i, char c) {
    if (c == ':' && i + 1 < qualified.size() && qualified[i + 1] == ':' && i >= from) {
      out.push_back(qualified.substr(from, i - from));
      from = i + 2;
    }
    return true;
  });
  out.push_back(qualified.substr(from));
  return out;
}

std::string_view base_name(std::string_view component) {
  return component.substr(0, component.find('<'));
}

std::string_view constructor_class(std::string_view function) {
  const std::string_view q = qualified_name(function);
  const auto parts = components(q);
  if (parts.size() < 2) return {};
  const std::string_view cls = base_name(parts[parts.size() - 2]);
  if (cls.empty() || base_name(parts.back()) != cls) return {};
  return q.substr(0, static_cast<size_t>(parts[parts.size() - 2].end() - q.begin()));
}

std::string tidy_type_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == ' ' && i + 1 < name.size() && name[i + 1] == '>') continue;
    out += name[i];
  }
  return out;
}

}  // namespace memloupe::types
