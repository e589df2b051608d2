// A minimal JSON writer for the data embedded in the HTML report. Output goes
// inside a <script> element, so '<' is always written as \u003c: the text can
// never close the element early, whatever a function name contains.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memloupe::report {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(std::string_view name);  // inside an object, before its value
  JsonWriter& string(std::string_view text);
  // Whole values exactly, fractions to 6 significant digits; non-finite -> 0.
  // Counts and times are integers: write them with integer(), not through a double.
  JsonWriter& number(double value);
  JsonWriter& integer(uint64_t value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  JsonWriter& raw(std::string_view json);  // a value another JsonWriter wrote
  // A text field as JSON: a number when it is one (CSV's raw values), null when
  // empty, else a string.
  JsonWriter& field(const std::string& text);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  JsonWriter& open(char c);
  JsonWriter& close(char c);
  void separate();

  std::string out_;
  bool need_comma_ = false;
};

// `s` cut to at most `max` bytes (never inside a UTF-8 character), ending in "…"
// if it was longer: how the HTML report keeps names bounded.
std::string cut(std::string s, size_t max);

}  // namespace memloupe::report
