// Numbers for people: sizes, counts, durations and estimates with intervals.
//
//   human_bytes(1536)                       "1.50 KiB"
//   bytes_estimate({1.2e6, 1.1e6, 1.3e6})   "1.14 MiB [1.05, 1.24]"   (interval in the value's unit)
//   human_count(1234567)                    "1,234,567"
//   count_estimate({1234, 1100, 1400})      "1.23k [1.10k, 1.40k]"
//   human_duration(1'234'000)               "1.23 ms"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/estimate.h"

namespace memloupe::report {

std::string human_bytes(double bytes);
std::string human_count(double count);       // integer with thousands separators
std::string short_count(double count);       // 3 significant digits: 987, 12.3k, 4.56M
std::string human_duration(uint64_t ns);
std::string human_percent(double part, double whole);  // "12.3%"; "-" when whole is 0
std::string csv_percent(double part, double whole);    // "12.35"; "0.00" when whole is 0
std::string csv_number(double v);                      // rounded to a whole number: "-1234"

// An exact estimate prints as its value alone.
std::string bytes_estimate(const analysis::Estimate& e, bool exact);
std::string count_estimate(const analysis::Estimate& e, bool exact);

// Columns on a terminal: the number of code points (UTF-8), good enough for
// the symbols used here (µ, ±, …, arrows, block elements).
size_t display_width(std::string_view s);
// Cuts `s` to `width` columns, ending in "…" if it was longer.
std::string truncate_display(std::string_view s, size_t width);

}  // namespace memloupe::report
