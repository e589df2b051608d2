#include "analysis/query.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "analysis/model.h"

namespace memloupe::analysis {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5ms" into 1.5 and "ms". Fails on no number, a negative one, or NaN.
std::optional<std::pair<double, std::string_view>> number_and_unit(std::string_view s) {
  s = trim(s);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !(value >= 0) || std::isinf(value)) return std::nullopt;
  return std::pair{value, trim(std::string_view(end, s.data() + s.size() - end))};
}

Error bad(std::string_view what, std::string_view text) {
  return Error{std::string(what) + ": '" + std::string(text) + "'"};
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

uint64_t to_u64(double v) {
  return v >= 18446744073709551615.0 ? kForever : static_cast<uint64_t>(std::llround(v));
}

Expected<uint64_t> resolve_duration(const std::string& text, const Overview& overview) {
  Expected<TimeSpec> spec = parse_time(text);
  if (!spec) return spec.error();
  if (spec->kind == TimeSpec::Kind::Peak || spec->kind == TimeSpec::Kind::End) {
    return bad("not a duration", text);
  }
  return resolve_time(*spec, overview);
}

}  // namespace

Expected<TimeSpec> parse_time(std::string_view text) {
  const std::string_view t = trim(text);
  if (iequals(t, "peak")) return TimeSpec{TimeSpec::Kind::Peak, 0};
  if (iequals(t, "end")) return TimeSpec{TimeSpec::Kind::End, 0};
  if (iequals(t, "start")) return TimeSpec{TimeSpec::Kind::Absolute, 0};
  auto parsed = number_and_unit(t);
  if (!parsed) return bad("not a time (try 1.5s, 200ms, 30%, peak, end)", text);
  auto [value, unit] = *parsed;
  if (unit == "%") {
    if (value > 100) return bad("a percentage of the trace must be at most 100", text);
    return TimeSpec{TimeSpec::Kind::Percent, value};
  }
  struct Unit {
    std::string_view name;
    double ns;
  };
  static constexpr Unit kUnits[] = {{"", 1e9},   {"s", 1e9},    {"ms", 1e6}, {"us", 1e3},
                                    {"µs", 1e3}, {"ns", 1},     {"min", 60e9}, {"h", 3600e9}};
  for (const Unit& u : kUnits) {
    if (unit == u.name) return TimeSpec{TimeSpec::Kind::Absolute, value * u.ns};
  }
  return bad("unknown time unit (use ns, us, ms, s, min, h or %)", text);
}

Expected<uint64_t> parse_size(std::string_view text) {
  auto parsed = number_and_unit(text);
  if (!parsed) return bad("not a size (try 100, 4KiB, 1.5M)", text);
  auto [value, unit] = *parsed;
  static constexpr std::string_view kPrefixes = "kmgtp";
  double scale = 1;
  if (!unit.empty()) {
    std::string_view rest = unit;
    const size_t p = kPrefixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(rest[0]))));
    if (p != std::string_view::npos) {
      scale = std::pow(1024.0, static_cast<double>(p + 1));
      rest.remove_prefix(1);
      if (!rest.empty() && (rest[0] == 'i' || rest[0] == 'I')) rest.remove_prefix(1);
    }
    if (!rest.empty() && !iequals(rest, "b")) return bad("unknown size unit (use B, KiB, MiB, GiB)", text);
  }
  return to_u64(value * scale);
}

uint64_t resolve_time(const TimeSpec& spec, const Overview& overview) {
  switch (spec.kind) {
    case TimeSpec::Kind::Absolute: return to_u64(spec.value);
    case TimeSpec::Kind::Percent:
      return to_u64(spec.value / 100 * static_cast<double>(overview.duration_ns));
    case TimeSpec::Kind::Peak: return overview.peak.time_ns;
    case TimeSpec::Kind::End: return overview.duration_ns;
  }
  return 0;
}

bool needs_first_pass(const QueryArgs& args) {
  // The temporary threshold is a duration; only a percentage of the trace needs it.
  const bool temporary_percent = !args.temporary.empty() && args.temporary.find('%') != std::string::npos;
  return !args.at.empty() || args.at_peak || args.at_end || !args.min_lifetime.empty() ||
         !args.max_lifetime.empty() || temporary_percent;
}

std::optional<BlockKind> block_kind_from_name(std::string_view name) {
  if (name == "all") return BlockKind::All;
  if (name == "heap") return BlockKind::Heap;
  if (name == "mapped") return BlockKind::Mapped;
  return std::nullopt;
}

std::optional<Error> validate(const QueryArgs& args) {
  if (!args.kind.empty() && !block_kind_from_name(args.kind)) {
    return bad("--kind: expected all, heap or mapped", args.kind);
  }
  const int selections = (args.at.empty() ? 0 : 1) + (args.at_peak ? 1 : 0) + (args.at_end ? 1 : 0);
  if (selections > 1) return Error{"choose one of --at, --between, --at-peak, --at-end"};
  if (args.at.size() > 2) return Error{"--between takes two times"};
  for (const std::string& t : args.at) {
    if (auto spec = parse_time(t); !spec) return spec.error();
  }
  if (args.test && selections == 0) {
    return Error{"--live, --allocated and --freed need a time (--at, --between, --at-peak, --at-end)"};
  }
  for (const std::string* s : {&args.min_size, &args.max_size}) {
    if (!s->empty()) {
      if (auto v = parse_size(*s); !v) return v.error();
    }
  }
  for (const std::string* s : {&args.min_lifetime, &args.max_lifetime, &args.temporary}) {
    if (s->empty()) continue;
    Expected<TimeSpec> spec = parse_time(*s);
    if (!spec) return spec.error();
    if (spec->kind == TimeSpec::Kind::Peak || spec->kind == TimeSpec::Kind::End) {
      return bad("not a duration", *s);
    }
  }
  return std::nullopt;
}

Expected<Query> resolve(const QueryArgs& args, const Overview& overview) {
  if (std::optional<Error> e = validate(args)) return *e;
  Query q;
  Filter& f = q.filter;
  if (!args.at.empty()) {
    const uint64_t t1 = resolve_time(parse_time(args.at[0]).value(), overview);
    const uint64_t t2 = args.at.size() == 2 ? resolve_time(parse_time(args.at[1]).value(), overview) : t1;
    if (t2 < t1) return Error{"--between: the second time is before the first"};
    f.window = TimeWindow{t1, t2};
  } else if (args.at_peak) {
    f.window = TimeWindow{overview.peak.time_ns, overview.peak.time_ns};
    f.at_peak = !args.test.has_value() || *args.test == WindowTest::Live;
  } else if (args.at_end) {
    f.window = TimeWindow{overview.duration_ns, overview.duration_ns};
  }
  if (f.window) {
    // An instant selects what was live then; a range, what was allocated in it.
    f.test = args.test.value_or(f.window->instant() ? WindowTest::Live : WindowTest::Allocated);
    q.live_window = *f.window;
  }
  if (!args.kind.empty()) f.kind = block_kind_from_name(args.kind).value();
  if (!args.min_size.empty()) f.min_size = parse_size(args.min_size).value();
  if (!args.max_size.empty()) f.max_size = parse_size(args.max_size).value();
  if (!args.min_lifetime.empty()) {
    Expected<uint64_t> v = resolve_duration(args.min_lifetime, overview);
    if (!v) return v.error();
    f.min_lifetime_ns = *v;
  }
  if (!args.max_lifetime.empty()) {
    Expected<uint64_t> v = resolve_duration(args.max_lifetime, overview);
    if (!v) return v.error();
    f.max_lifetime_ns = *v;
  }
  if (!args.temporary.empty()) {
    Expected<uint64_t> v = resolve_duration(args.temporary, overview);
    if (!v) return v.error();
    q.temporary_ns = *v;
  }
  if (args.thread) f.thread = format::ThreadId{*args.thread};
  f.focus = args.focus;
  f.hide = args.hide;
  q.grouping = args.grouping;
  q.series_buckets = args.series_buckets;
  return q;
}

}  // namespace memloupe::analysis
