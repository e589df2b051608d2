#include "report/export_pprof.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>

#include "report/export_gzip.h"
#include "report/export_proto.h"

namespace memloupe::report {

namespace {

// Field numbers of profile.proto (github.com/google/pprof, proto/profile.proto).
namespace field {
enum Profile : uint32_t {
  kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
  kStringTable = 6, kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11,
  kPeriod = 12, kComment = 13,
};
enum ValueType : uint32_t { kType = 1, kUnit = 2 };
enum Sample : uint32_t { kLocationId = 1, kValue = 2, kLabel = 3 };
enum Label : uint32_t { kKey = 1, kStr = 2 };
enum Mapping : uint32_t {
  kMappingId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFileOffset = 4, kFilename = 5,
  kBuildId = 6, kHasFunctions = 7, kHasFilenames = 8, kHasLineNumbers = 9, kHasInlineFrames = 10,
};
enum Location : uint32_t { kLocId = 1, kLocMappingId = 2, kAddress = 3, kLine = 4 };
enum Line : uint32_t { kFunctionId = 1, kLineNumber = 2, kColumn = 3 };
enum Function : uint32_t { kFuncId = 1, kName = 2, kSystemName = 3, kFuncFilename = 4 };
}  // namespace field

// string_table: index 0 is "" (the spec requires it), every string once.
class StringTable {
 public:
  StringTable() { intern(""); }
  uint64_t intern(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, strings_.size());
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, uint64_t> index_;
  std::vector<std::string> strings_;
};

// pprof values are int64; our estimates are doubles. Round to nearest.
uint64_t as_int64(double v) { return static_cast<uint64_t>(static_cast<int64_t>(std::llround(v))); }

ProtoWriter value_type(StringTable& strings, const char* type, const char* unit) {
  ProtoWriter w;
  w.varint_field(field::kType, strings.intern(type));
  w.varint_field(field::kUnit, strings.intern(unit));
  return w;
}

std::string function_name(const SourceFrame& frame, uint64_t address) {
  if (!frame.function.empty()) return frame.function;
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

}  // namespace

std::vector<uint8_t> pprof_proto(const Profile& profile) {
  ProtoWriter out;
  StringTable strings;

  for (auto [type, unit] : {std::pair{"alloc_objects", "count"}, {"alloc_space", "bytes"},
                            {"inuse_objects", "count"}, {"inuse_space", "bytes"}}) {
    out.message(field::kSampleType, value_type(strings, type, unit));
  }

  for (const Site& site : profile.sites) {
    const SiteValues& v = site.values;
    std::vector<uint64_t> values = {as_int64(v.allocated.objects), as_int64(v.allocated.bytes),
                                    as_int64(v.live.objects), as_int64(v.live.bytes)};
    bool all_zero = true;
    for (uint64_t x : values) all_zero = all_zero && x == 0;
    if (all_zero) continue;  // a site active only outside the selection
    std::vector<uint64_t> ids;
    ids.reserve(site.stack.size());
    for (LocationId id : site.stack) ids.push_back(uint64_t{id.value} + 1);  // ids are 1-based
    ProtoWriter sample;
    sample.packed_varints(field::kLocationId, ids);
    sample.packed_varints(field::kValue, values);
    if (!site.type.empty()) {  // `pprof -tagfocus type=...`, `-tags`
      ProtoWriter label;
      label.varint_field(field::kKey, strings.intern("type"));
      label.varint_field(field::kStr, strings.intern(site.type));
      sample.message(field::kLabel, label);
    }
    out.message(field::kSample, sample);
  }

  // Which mappings have symbolised locations: pprof then trusts our names and does
  // not try to symbolise those addresses itself.
  std::vector<bool> mapping_symbolised(profile.mappings.size(), false);
  for (const Location& loc : profile.locations) {
    if (loc.mapping && loc.symbolized && !loc.frames.empty()) mapping_symbolised[loc.mapping->value] = true;
  }
  for (size_t i = 0; i < profile.mappings.size(); ++i) {
    const Mapping& m = profile.mappings[i];
    ProtoWriter w;
    w.varint_field(field::kMappingId, i + 1);
    w.varint_field(field::kMemoryStart, m.start);
    w.varint_field(field::kMemoryLimit, m.end);
    w.varint_field_nonzero(field::kFileOffset, m.file_offset);
    w.varint_field(field::kFilename, strings.intern(m.path));
    w.varint_field_nonzero(field::kBuildId, m.build_id.empty() ? 0 : strings.intern(m.build_id));
    if (mapping_symbolised[i]) {
      for (uint32_t f : {field::kHasFunctions, field::kHasFilenames, field::kHasLineNumbers,
                         field::kHasInlineFrames}) {
        w.varint_field(f, 1);
      }
    }
    out.message(field::kMapping, w);
  }

  // Functions are keyed by (name, file); ordered map keeps the output deterministic.
  std::map<std::pair<std::string, std::string>, uint64_t> function_ids;
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const Location& loc = profile.locations[i];
    ProtoWriter w;
    w.varint_field(field::kLocId, i + 1);
    if (loc.mapping) w.varint_field(field::kLocMappingId, uint64_t{loc.mapping->value} + 1);
    w.varint_field(field::kAddress, loc.address);
    if (!loc.symbolized) {
      out.message(field::kLocation, w);
      continue;
    }
    for (const SourceFrame& frame : loc.frames) {
      auto key = std::pair{function_name(frame, loc.address), frame.file};
      auto [it, inserted] = function_ids.try_emplace(key, function_ids.size() + 1);
      ProtoWriter line;
      line.varint_field(field::kFunctionId, it->second);
      line.varint_field_nonzero(field::kLineNumber, frame.line);
      line.varint_field_nonzero(field::kColumn, frame.column);
      w.message(field::kLine, line);
    }
    out.message(field::kLocation, w);
  }
  std::vector<const decltype(function_ids)::value_type*> by_id(function_ids.size());
  for (const auto& entry : function_ids) by_id[entry.second - 1] = &entry;
  for (const auto* entry : by_id) {
    ProtoWriter w;
    uint64_t name = strings.intern(entry->first.first);
    w.varint_field(field::kFuncId, entry->second);
    w.varint_field(field::kName, name);
    w.varint_field(field::kSystemName, name);
    w.varint_field_nonzero(field::kFuncFilename, strings.intern(entry->first.second));
    out.message(field::kFunction, w);
  }

  out.varint_field_nonzero(field::kTimeNanos,
                           profile.info.start_wall_ns + profile.selection_begin_ns);
  out.varint_field_nonzero(field::kDurationNanos,
                           profile.selection_end_ns - profile.selection_begin_ns);
  out.message(field::kPeriodType, value_type(strings, "space", "bytes"));
  bool sampled = profile.info.mode == format::Mode::Sampled && profile.info.bytes_per_sample > 0;
  out.varint_field(field::kPeriod, sampled ? profile.info.bytes_per_sample : 1);
  std::string comment = "memloupe trace of " + profile.info.executable;
  out.varint_field(field::kComment, strings.intern(comment));

  // The string table goes last: every other field has interned its strings by now.
  for (const std::string& s : strings.strings()) out.string_field(field::kStringTable, s);
  return out.take();
}

Expected<std::vector<uint8_t>> pprof_gzipped(const Profile& profile) {
  return gzip_compress(pprof_proto(profile));
}

}  // namespace memloupe::report
