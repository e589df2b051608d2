// `memloupe types TRACE`: objects per C++ type, from the types table finalise
// stored in the trace (docs/TYPES.md); with --type NAME, the stacks that
// created that type.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/text_options.h"
#include "report/text_types.h"

namespace memloupe::cli {

Command add_types_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    RankOptions rank;
    std::string by = "count";
    std::string type;
  };
  auto o = std::make_shared<Options>();
  o->rank.limit = 30;
  CLI::App* sub = app.add_subcommand("types", "Objects created per C++ type; the stacks that created one type");
  add_view_options(sub, o->view);
  add_rank_options(sub, o->rank, false);
  sub->add_option("--by", o->by, "Sort types by count (objects), bytes (allocated) or live (bytes live at the end)")
      ->check(CLI::IsMember({"count", "bytes", "live"}))
      ->capture_default_str();
  sub->add_option("--type", o->type,
                  "Show the stacks that created this type (its exact name, else a regex searched in type names);"
                  " --depth cuts them, --min-count drops rare ones");
  return {sub, [o] {
            o->view.args.grouping = *grouping(o->rank.group);
            report::TypesOptions t;
            t.order = o->by == "bytes" ? analysis::TypeOrder::Bytes
                      : o->by == "live" ? analysis::TypeOrder::Live
                                        : analysis::TypeOrder::Count;
            t.type = o->type;
            t.depth = o->rank.depth;
            t.min_count = o->rank.min_count;
            t.limit = o->rank.limit;
            t.frames = o->rank.frames;
            t.json = o->rank.json;
            t.csv = o->rank.csv;
            t.width = o->rank.json || o->rank.csv ? 0 : table_width();
            t.full_names = o->rank.full_names;
            int exit_code = kOk;
            const std::optional<analysis::Model> model = analyze(o->view, 0, exit_code);
            if (!model) return exit_code;
            const types::LoadedTypes loaded = types::load_types_file(o->view.trace);
            if (loaded.problem) {
              fmt::print(stderr, "memloupe: warning: {}: damaged types table: {}\n", o->view.trace,
                         loaded.problem->message);
            }
            auto text = report::render_types(*model, loaded, t);
            if (!text) {
              fmt::print(stderr, "memloupe: {}\n", text.error().message);
              return static_cast<int>(kUsage);
            }
            std::cout << *text;
            return loaded.problem && exit_code == kOk ? static_cast<int>(kDamaged) : exit_code;
          }};
}

}  // namespace memloupe::cli
