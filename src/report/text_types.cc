#include "report/text_types.h"

#include <regex>

#include "report/html_json.h"
#include "report/text_format.h"
#include "report/text_sites.h"
#include "report/text_views.h"

namespace memloupe::report {
namespace {

using analysis::Estimate;
using analysis::Estimator;
using analysis::Metric;
using analysis::TypeCount;

// The types --type selects: the one named exactly, else those the regex finds.
Expected<std::vector<const TypeCount*>> select(const std::vector<TypeCount>& rows, const std::string& pattern) {
  std::vector<const TypeCount*> out;
  for (const TypeCount& t : rows) {
    if (t.type == pattern) return std::vector<const TypeCount*>{&t};
  }
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Error{"--type " + pattern + ": no type has that name, and it is not a valid regex (" + e.what() + ")"};
  }
  for (const TypeCount& t : rows) {
    if (std::regex_search(t.type, re)) out.push_back(&t);
  }
  return out;
}

std::string how(const TypeCount& t) {
  if (!t.known) return "-";
  std::string out;
  for (types::TypeRule r : t.rules) out += (out.empty() ? "" : ",") + std::string(types::rule_name(r));
  return out;
}

Cell count_cell(const Estimate& e, bool exact) {
  return Cell{count_estimate(e, exact), {csv_number(e.value), csv_number(e.lo), csv_number(e.hi)}};
}

std::string frame_text(const analysis::Model& m, analysis::FrameId id, bool full_names) {
  return frame_label(m.tree.frame(id), full_names);
}

void json_estimate(JsonWriter& j, const std::string& name, const Estimate& e, bool exact) {
  j.key(name).number(e.value);
  if (!exact) {
    j.key(name + "_interval").begin_array().number(e.lo).number(e.hi).end_array();
  }
}

}  // namespace

Expected<std::string> render_types(const analysis::Model& m, const types::LoadedTypes& loaded,
                                   const TypesOptions& o) {
  const std::vector<TypeCount> rows = analysis::count_types(m, loaded.table, o.order);
  const Estimator& e = m.aggregate.estimator;
  const bool exact = e.exact();
  std::vector<const TypeCount*> chosen;
  if (!o.type.empty()) {
    auto selected = select(rows, o.type);
    if (!selected) return selected.error();
    chosen = std::move(*selected);
  }
  analysis::Count untyped, all;
  for (const TypeCount& t : rows) {
    all += t.metrics[Metric::Allocated];
    if (!t.known) untyped += t.metrics[Metric::Allocated];
  }

  if (o.json) {
    JsonWriter j;
    j.begin_object();
    j.key("exact").boolean(exact);
    j.key("types_table").boolean(loaded.present);
    if (loaded.problem) j.key("types_table_problem").string(loaded.problem->message);
    json_estimate(j, "untyped_bytes", e.bytes(untyped), exact);
    json_estimate(j, "untyped_blocks", e.objects(untyped), exact);
    json_estimate(j, "bytes", e.bytes(all), exact);
    j.key("types").begin_array();
    size_t n = 0;
    for (const TypeCount& t : rows) {
      if (o.limit != 0 && n++ == o.limit) break;
      j.begin_object();
      j.key("type").string(t.type);
      j.key("known").boolean(t.known);
      j.key("size").integer(t.type_size);
      j.key("array").boolean(t.shape == types::TypeShape::Array);
      j.key("how").string(how(t));
      json_estimate(j, "count", t.objects(Metric::Allocated, e), exact);
      json_estimate(j, "blocks", e.objects(t.metrics[Metric::Allocated]), exact);
      json_estimate(j, "bytes", e.bytes(t.metrics[Metric::Allocated]), exact);
      json_estimate(j, "live_count", t.objects(Metric::Leaked, e), exact);
      json_estimate(j, "live_bytes", e.bytes(t.metrics[Metric::Leaked]), exact);
      json_estimate(j, "peak_count", t.objects(Metric::Peak, e), exact);
      json_estimate(j, "peak_bytes", e.bytes(t.metrics[Metric::Peak]), exact);
      j.end_object();
    }
    j.end_array();
    if (!o.type.empty()) {
      j.key("stacks").begin_array();
      for (const TypeCount* t : chosen) {
        for (const analysis::TypeStack& s : analysis::type_stacks(m, *t, o.depth, o.min_count)) {
          j.begin_object();
          j.key("type").string(t->type);
          json_estimate(j, "count", s.objects, exact);
          json_estimate(j, "bytes", s.bytes, exact);
          j.key("frames").begin_array();
          for (analysis::FrameId f : s.frames) j.string(m.tree.frame(f).function);
          j.end_array();
          j.end_object();
        }
      }
      j.end_array();
    }
    j.end_object();
    return j.take() + "\n";
  }

  if (!o.type.empty()) {
    std::string out = describe_selection(m);
    if (chosen.empty()) return out + "No type matches " + o.type + "\n";
    for (const TypeCount* t : chosen) {
      out += "\n" + t->type + ": " + count_estimate(t->objects(Metric::Allocated, e), exact) + " objects, " +
             bytes_estimate(e.bytes(t->metrics[Metric::Allocated]), exact) + " in " +
             count_estimate(e.objects(t->metrics[Metric::Allocated]), exact) + " blocks\n";
      TextTable table;
      table.add_column("Objects", TextTable::Align::Right, estimate_csv_headers("objects"));
      table.add_column("Bytes", TextTable::Align::Right, estimate_csv_headers("bytes"));
      table.add_column("Stack (innermost first)", TextTable::Align::Left);
      for (const analysis::TypeStack& s : analysis::type_stacks(m, *t, o.depth, o.min_count)) {
        std::vector<std::string> notes;
        for (size_t i = 1; i < s.frames.size() && (o.frames == 0 || i < o.frames); ++i) {
          notes.push_back(frame_text(m, s.frames[i], o.full_names));
        }
        if (o.frames != 0 && s.frames.size() > o.frames) notes.push_back("…");
        const std::string first = s.frames.empty() ? "(every frame hidden)" : frame_text(m, s.frames[0], o.full_names);
        table.add_row({count_cell(s.objects, exact),
                       Cell{bytes_estimate(s.bytes, exact), {csv_number(s.bytes.value), csv_number(s.bytes.lo), csv_number(s.bytes.hi)}},
                       Cell{first}},
                      std::move(notes));
      }
      if (o.csv) {
        out += table.csv();
      } else {
        out += table.rows() ? table.render(o.width) : "(no stack with at least " + human_count(o.min_count) + " objects)\n";
      }
    }
    return out;
  }

  TextTable table;
  table.add_column("Objects", TextTable::Align::Right, estimate_csv_headers("count"));
  table.add_column("Blocks", TextTable::Align::Right, estimate_csv_headers("blocks"));
  table.add_column("Bytes", TextTable::Align::Right, estimate_csv_headers("bytes"));
  table.add_column("Live at end", TextTable::Align::Right, estimate_csv_headers("live_count"));
  table.add_column("At peak", TextTable::Align::Right, estimate_csv_headers("peak_count"));
  table.add_column("Size", TextTable::Align::Right);
  table.add_column("How", TextTable::Align::Left);
  table.add_column("Type", TextTable::Align::Left);
  size_t n = 0;
  for (const TypeCount& t : rows) {
    if (o.limit != 0 && n++ == o.limit) break;
    table.add_row({count_cell(t.objects(Metric::Allocated, e), exact),
                   objects_cell(e, t.metrics[Metric::Allocated]), bytes_cell(e, t.metrics[Metric::Allocated]),
                   count_cell(t.objects(Metric::Leaked, e), exact), count_cell(t.objects(Metric::Peak, e), exact),
                   Cell{t.type_size ? std::to_string(t.type_size) : "-"}, Cell{how(t)},
                   Cell{o.full_names || !t.known ? t.type : function_label(t.type, false)}});
  }
  if (o.csv) return table.csv();
  std::string out = describe_selection(m);
  if (!loaded.present) {
    out += "This trace has no types table (finalised before memloupe types existed, or not finalised):"
           " run `memloupe symbolize --force TRACE` where its binaries are.\n";
  }
  if (loaded.problem) out += "warning: the types table is damaged (" + loaded.problem->message + "); sites after the damage count as unknown\n";
  out += "Typed: " + human_percent(e.bytes_value(all) - e.bytes_value(untyped), e.bytes_value(all)) +
         " of allocated bytes; not typed: " + bytes_estimate(e.bytes(untyped), exact) + " in " +
         count_estimate(e.objects(untyped), exact) + " blocks\n\n";
  return out + table.render(o.width);
}

}  // namespace memloupe::report
