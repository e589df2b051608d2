#include "report/html_json.h"

#include <cmath>
#include <cstdio>

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
  // Whole numbers up to 2^53 are written exactly (byte counts from --all traces).
  if (value == std::floor(value) && std::fabs(value) < 9.0e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    out_ += buf;
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::integer(uint64_t value) {
  separate();
  out_ += std::to_string(value);
  return *this;
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
