#include "report/html_json.h"

#include <fmt/format.h>

#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace memloupe::report {

void JsonWriter::separate() {
  if (need_comma_) out_.push_back(',');
  need_comma_ = true;
}

JsonWriter& JsonWriter::open(char c) {
  separate();
  out_.push_back(c);
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  out_.push_back(c);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  string(name);
  out_.push_back(':');
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  separate();
  out_.push_back('"');
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out_.push_back('\\');
      out_.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == '<' || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out_ += buf;
    } else {
      out_.push_back(static_cast<char>(c));  // UTF-8 bytes pass through
    }
  }
  out_.push_back('"');
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  separate();
  if (!std::isfinite(value)) value = 0;
  // Whole numbers are written with every digit (a 19-digit timestamp printed
  // with 6 significant digits moved the report's start time by over an hour);
  // fractions keep 6 significant digits, plenty for a drawing.
  out_ += value == std::floor(value) ? fmt::format("{:.0f}", value) : fmt::format("{:.6g}", value);
  return *this;
}

JsonWriter& JsonWriter::integer(uint64_t value) {
  separate();
  out_ += fmt::format("{}", value);
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::field(const std::string& text) {
  if (text.empty()) return null();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  // Whole decimal integers go through as written (exact beyond 2^53).
  if (text.find_first_not_of("0123456789") == std::string::npos && text.size() < 20) {
    separate();
    out_ += text;
    return *this;
  }
  if (end == text.c_str() + text.size() && std::isfinite(value) && !std::isspace(static_cast<unsigned char>(text[0]))) {
    return number(value);
  }
  return string(text);
}

JsonWriter& JsonWriter::boolean(bool value) {
  separate();
  out_ += value ? "true" : "false";
  return *this;
}

std::string cut(std::string s, size_t max) {
  if (s.size() > max) {
    s.resize(max);
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();  // no half UTF-8
    if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
    s += "…";
  }
  return s;
}

}  // namespace memloupe::report
