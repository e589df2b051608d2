// The HTML report's retention data: bounded trees, the placeholders filled.
#include "report/retention_html.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/alloc_stacks.h"
#include "report/html_report.h"
#include "support/test_profile.h"
#include "support/test_snapshot.h"

namespace memloupe::report {
namespace {

// One global holding a block that holds `fan` blocks, each holding a chain of `depth`.
struct Wide {
  retention::HeapSnapshot snapshot;
  analysis::AllocStacks stacks;
  std::optional<retention::Retention> ret;
  std::optional<RetentionNames> names;

  Wide(uint32_t fan, uint32_t depth) {
    retention::testing::SnapshotBuilder s;
    const uint32_t g = s.root("g_table");
    const uint32_t table = s.block(1000);
    s.root_edge(g, table);
    for (uint32_t i = 0; i < fan; ++i) {
      uint32_t prev = s.block(100 + i);
      s.block_edge(table, prev);
      for (uint32_t d = 1; d < depth; ++d) {
        const uint32_t next = s.block(10);
        s.block_edge(prev, next);
        prev = next;
      }
    }
    snapshot = s.build();
    snapshot.label = "wide";
    ret.emplace(retention::analyze_retention(snapshot));
    names.emplace(snapshot, stacks, SiteStyle{});
  }
  SnapshotReport report() const { return {snapshot, *ret, *names, 1, 1}; }
};

TEST(RetentionHtml, TreesAreCutToTheLimits) {
  const Wide w(30, 20);
  const SnapshotReport reports[] = {w.report()};
  RetentionHtmlLimits limits;
  limits.breadth = 4;
  limits.depth = 3;
  const std::string json = retention_html_json(reports, limits);
  EXPECT_EQ(json.rfind("{\"snapshots\":[{\"label\":\"wide\",", 0), 0u) << json;
  EXPECT_NE(json.find("\"kind\":\"global\",\"name\":\"g_table\""), std::string::npos) << json;
  // The table's 30 children: the 4 largest shown, 26 summed (sizes 100..125 plus 19 x 10 each).
  uint64_t rest = 0;
  for (uint32_t i = 0; i < 26; ++i) rest += 100 + i + 19 * 10;
  EXPECT_NE(json.find("\"more_count\":26,\"more_bytes\":" + std::to_string(rest)), std::string::npos) << json;
  // Depth 3 below the root: the table (1), a chain head (2), its next (3), and no deeper.
  EXPECT_NE(json.find("\"tree_nodes\":" + std::to_string(1 + 4 + 4)), std::string::npos) << json;

  limits.nodes = 3;
  EXPECT_NE(retention_html_json(reports, limits).find("\"tree_nodes\":3"), std::string::npos);
  EXPECT_EQ(retention_html_json({}, limits), "null");
}

TEST(RetentionHtml, ReportCarriesTheDataAndThePanel) {
  const Wide w(2, 2);
  const SnapshotReport reports[] = {w.report()};
  std::ostringstream with, without;
  write_html_report(testing::small_profile(), with, {}, retention_html_json(reports));
  write_html_report(testing::small_profile(), without);
  EXPECT_EQ(with.str().find("@RETENTION@"), std::string::npos);
  EXPECT_NE(with.str().find("id=\"memloupe-retention\">{\"snapshots\":[{\"label\":\"wide\""), std::string::npos);
  EXPECT_NE(with.str().find("id=\"retention-panel\" hidden"), std::string::npos);  // the script shows it
  EXPECT_NE(without.str().find("id=\"memloupe-retention\">null</script>"), std::string::npos);
}

}  // namespace
}  // namespace memloupe::report
