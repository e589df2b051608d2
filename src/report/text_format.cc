#include "report/text_format.h"

#include <cmath>
#include <cstdio>

namespace memloupe::report {
namespace {

struct Scaled {
  double value;
  const char* unit;
};

Scaled scale_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t u = 0;
  while (std::fabs(bytes) >= 1024 && u + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++u;
  }
  return {bytes, kUnits[u]};
}

// 3 significant digits, no exponent: 1.23, 12.3, 123.
std::string three_digits(double v) {
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 99.95 ? "%.0f" : a >= 9.995 ? "%.1f" : "%.2f", v);
  return buf;
}

std::string in_unit(double bytes, double unit_divisor) {
  return three_digits(bytes / unit_divisor);
}

}  // namespace

std::string human_bytes(double bytes) {
  const Scaled s = scale_bytes(bytes);
  if (s.unit[0] == 'B') {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f B", s.value);
    return buf;
  }
  return three_digits(s.value) + " " + s.unit;
}

std::string human_count(double count) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", std::round(count));
  std::string digits = buf, out;
  const size_t sign = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string short_count(double count) {
  static constexpr const char* kSuffix[] = {"", "k", "M", "G", "T"};
  size_t u = 0;
  double v = count;
  while (std::fabs(v) >= 999.5 && u + 1 < std::size(kSuffix)) {
    v /= 1000;
    ++u;
  }
  if (u == 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  return three_digits(v) + kSuffix[u];
}

std::string human_duration(uint64_t ns) {
  char buf[48];
  const double v = static_cast<double>(ns);
  if (ns < 1000) {
    std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(ns));
  } else if (ns < 1'000'000) {
    std::snprintf(buf, sizeof buf, "%s µs", three_digits(v / 1e3).c_str());
  } else if (ns < 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%s ms", three_digits(v / 1e6).c_str());
  } else if (ns < 600'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.3f s", v / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f min", v / 60e9);
  }
  return buf;
}

std::string human_percent(double part, double whole) {
  if (whole <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * part / whole);
  return buf;
}

std::string csv_percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", whole > 0 ? 100 * part / whole : 0.0);
  return buf;
}

std::string csv_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string bytes_estimate(const analysis::Estimate& e, bool exact) {
  if (exact) return human_bytes(e.value);
  // The interval is written in the unit of the value (or of the upper bound
  // when the value is 0) so that the three numbers read together.
  const Scaled s = scale_bytes(e.value > 0 ? e.value : e.hi);
  const double divisor = e.value > 0 ? e.value / s.value : (e.hi > 0 ? e.hi / s.value : 1);
  if (s.unit[0] == 'B') {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f B [%.0f, %.0f]", e.value, e.lo, e.hi);
    return buf;
  }
  return in_unit(e.value, divisor) + " " + s.unit + " [" + in_unit(e.lo, divisor) + ", " + in_unit(e.hi, divisor) +
         "]";
}

std::string count_estimate(const analysis::Estimate& e, bool exact) {
  if (exact) return human_count(e.value);
  return short_count(e.value) + " [" + short_count(e.lo) + ", " + (e.bounded ? short_count(e.hi) : "?") + "]";
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string truncate_display(std::string_view s, size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width == 0) return {};
  std::string out;
  size_t cols = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (cols + 1 == width) break;
      ++cols;
    }
    out += s[i];
  }
  return out + "…";
}

}  // namespace memloupe::report
