#include "recorder/config.h"

#include <cstring>

#include "format/signal_names.h"
#include "format/wire.h"
#include "recorder/sys.h"

namespace memloupe::recorder {
namespace {

std::optional<uint64_t> parse_uint(std::string_view s) noexcept {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

void warn_bad(const char* name, std::string_view value, std::string_view expected) noexcept {
  (LogLine() << "ignoring " << name << "='" << value << "': expected " << expected
             << "; using the default")
      .emit();
}

// Reads `name` and, if set and non-empty, hands its value to `apply`; a false
// return from `apply` reports the value as malformed.
template <class Apply>
void with_var(EnvLookup lookup, const char* name, std::string_view expected, Apply apply) noexcept {
  const char* raw = lookup(name);
  if (raw == nullptr || *raw == '\0') return;
  if (!apply(std::string_view(raw))) warn_bad(name, raw, expected);
}

template <class T>
auto store_in_range(T& field, uint64_t lo, uint64_t hi, std::optional<uint64_t> (*parse)(std::string_view)) {
  return [&field, lo, hi, parse](std::string_view v) {
    const auto n = parse(v);
    if (!n || *n < lo || *n > hi) return false;
    field = static_cast<T>(*n);
    return true;
  };
}

auto store_flag(bool& field) {
  return [&field](std::string_view v) {
    if (v != "0" && v != "1") return false;
    field = v == "1";
    return true;
  };
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text) noexcept {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  // (No substr(): its bounds check would pull the C++ runtime into the preload library.)
  const auto number = parse_uint({text.data(), digits});
  if (!number) return std::nullopt;
  std::string_view unit(text.data() + digits, text.size() - digits);
  unsigned shift = 0;
  if (!unit.empty()) {
    switch (unit[0] | 0x20) {  // ASCII lower case
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      default: return std::nullopt;
    }
    unit.remove_prefix(1);
    if (unit != "" && unit != "B" && unit != "iB" && unit != "b") return std::nullopt;
  }
  if (shift && *number > (~uint64_t{0} >> shift)) return std::nullopt;
  return *number << shift;
}

bool expand_output_path(std::string_view pattern, uint32_t pid, char* out, size_t cap) noexcept {
  size_t len = 0;
  auto put = [&](std::string_view s) {
    if (len + s.size() >= cap) return false;
    std::memcpy(out + len, s.data(), s.size());
    len += s.size();
    return true;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    bool ok;
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      char digits[21];
      ok = put({digits, format_u64(digits, pid)});
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      ok = put("%");
      ++i;
    } else {
      ok = put({pattern.data() + i, 1});
    }
    if (!ok) return false;
  }
  if (len >= cap) return false;
  out[len] = '\0';
  return true;
}

Config read_config(EnvLookup lookup) noexcept {
  Config c;
  with_var(lookup, "MEMLOUPE_OUTPUT", "a path shorter than 4096 bytes", [&](std::string_view v) {
    if (v.size() >= Config::kMaxPath) return false;
    std::memcpy(c.output, v.data(), v.size());
    c.output[v.size()] = '\0';
    return true;
  });
  with_var(lookup, "MEMLOUPE_MODE", "'sampled' or 'all'", [&](std::string_view v) {
    if (v != "sampled" && v != "all") return false;
    c.mode = v == "all" ? format::Mode::All : format::Mode::Sampled;
    return true;
  });
  with_var(lookup, "MEMLOUPE_ADDRESSES", "0 or 1", store_flag(c.addresses));
  with_var(lookup, "MEMLOUPE_EVERY", "a size from 1 to 1TiB, like 512KiB",
           store_in_range(c.every, 1, kMaxEvery, parse_size));
  with_var(lookup, "MEMLOUPE_DEPTH", "a frame count from 0 to 256",
           store_in_range(c.depth, 0, 256, parse_uint));
  with_var(lookup, "MEMLOUPE_FLUSH_MS", "milliseconds from 1 to 3600000",
           store_in_range(c.flush_ms, 1, 3'600'000, parse_uint));
  with_var(lookup, "MEMLOUPE_ZSTD_LEVEL", "'auto' or a zstd level from 0 (none) to 19",
           [&](std::string_view v) {
             if (v != "auto") return store_in_range(c.zstd_level, 0, 19, parse_uint)(v);
             c.zstd_level = ChunkCompressor::kAuto;
             return true;
           });
  with_var(lookup, "MEMLOUPE_TIME_UNIT", "microseconds per tick, a power of two from 1 to 1048576",
           [&](std::string_view v) {
             const auto us = parse_uint(v);
             if (!us || *us == 0 || *us > format::kMaxTimeUnitUs || (*us & (*us - 1)) != 0) return false;
             c.time_unit_us = static_cast<uint32_t>(*us);
             return true;
           });
  with_var(lookup, "MEMLOUPE_FOLLOW_FORK", "0 or 1", store_flag(c.follow_fork));
  with_var(lookup, "MEMLOUPE_FOLLOW_EXEC", "0 or 1", store_flag(c.follow_exec));
  with_var(lookup, "MEMLOUPE_SESSION_PID", "a process id", [&](std::string_view v) {
    c.session_pid = parse_uint(v);
    return c.session_pid.has_value();
  });
  with_var(lookup, "MEMLOUPE_START_PAUSED", "0 or 1", store_flag(c.start_paused));
  with_var(lookup, "MEMLOUPE_SNAPSHOT_AT_EXIT", "0 or 1", store_flag(c.snapshot_at_exit));
  with_var(lookup, "MEMLOUPE_SNAPSHOT_SIGNAL", "a signal name like USR2, or its number",
           [&](std::string_view v) {
             const auto sig = format::parse_signal(v);
             if (sig) c.snapshot_signal = *sig;
             return sig.has_value();
           });
  with_var(lookup, "MEMLOUPE_SEED", "an unsigned integer", [&](std::string_view v) {
    c.seed = parse_uint(v);
    return c.seed.has_value();
  });
  return c;
}

}  // namespace memloupe::recorder
