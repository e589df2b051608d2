// The exports opened by the tools people use: `go tool pprof` (Debian's
// golang-go) and `ms_print` (Valgrind). Expected values are the hand-worked
// table of tests/support/test_profile.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "report/export_massif.h"
#include "report/export_pprof.h"
#include "support/test_profile.h"
#include "tool_runner.h"

namespace memloupe::report {
namespace {

using testing::run;

std::string write_pprof(const Profile& p, const std::string& dir) {
  std::string path = dir + "/profile.pb.gz";
  auto bytes = pprof_gzipped(p);
  EXPECT_TRUE(bytes.ok());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()),
                                              static_cast<std::streamsize>(bytes->size()));
  return path;
}

// `go tool pprof -top` rows: function -> "flat cum" (sizes in bytes: -unit=B).
std::map<std::string, std::string> pprof_top(const std::string& file, const std::string& index) {
  std::string unit = index.ends_with("_space") ? "-unit=B " : "";
  testing::Run r = run("go tool pprof -top " + unit + "-sample_index=" + index + " '" + file + "' 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  std::map<std::string, std::string> rows;
  std::regex row(R"(^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.+)$)");
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows[m[3]] = m[1].str() + " " + m[2].str();
  }
  return rows;
}

TEST(GoToolPprof, ReadsAllocatedAndInUseSpace) {
  if (!testing::on_path("go")) GTEST_SKIP() << "go (Debian golang-go) is not installed";
  std::string file = write_pprof(testing::small_profile(), testing::scratch_dir("pprof"));

  auto alloc = pprof_top(file, "alloc_space");
  EXPECT_EQ(alloc["load_config"], "5000B 5300B");
  EXPECT_EQ(alloc["Widget::Widget (inline)"], "1000B 1000B");
  EXPECT_EQ(alloc["parse;token"], "300B 300B");
  EXPECT_EQ(alloc["main"], "0 6350B");
  EXPECT_EQ(alloc["make_widgets"], "0 1000B");

  auto inuse = pprof_top(file, "inuse_space");
  EXPECT_EQ(inuse["parse;token"], "300B 300B");
  EXPECT_EQ(inuse["Widget::Widget (inline)"], "200B 200B");
  EXPECT_EQ(inuse["main"], "0 500B");
  EXPECT_EQ(inuse.count("[libfake.so]"), 0u);  // nothing of it is live

  auto objects = pprof_top(file, "alloc_objects");
  EXPECT_EQ(objects["main"], "0 19");
}

TEST(GoToolPprof, HeaderNamesTheSampleTypesAndPeriod) {
  if (!testing::on_path("go")) GTEST_SKIP() << "go (Debian golang-go) is not installed";
  std::string file = write_pprof(testing::small_profile(), testing::scratch_dir("pprof-raw"));
  testing::Run r = run("go tool pprof -raw '" + file + "' 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("PeriodType: space bytes\nPeriod: 4096\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"),
            std::string::npos);
  // Inlined frames are Lines of one location, innermost first; the build-id is kept.
  EXPECT_NE(r.out.find("0x401100 M=1 Widget::Widget widget.h:7 s=0\n             make_widgets prog.cc:20"),
            std::string::npos);
  EXPECT_NE(r.out.find("/usr/bin/prog abcd1234"), std::string::npos);
}

TEST(MsPrint, AcceptsTheMassifFileAndShowsThePeak) {
  if (!testing::on_path("ms_print")) GTEST_SKIP() << "ms_print (Debian valgrind) is not installed";
  std::string dir = testing::scratch_dir("massif");
  {
    std::ofstream out(dir + "/massif.out");
    write_massif(testing::small_profile(), out);
  }
  testing::Run r = run("ms_print '" + dir + "/massif.out' 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Number of snapshots: 6"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Detailed snapshots: [2 (peak), 5]"), std::string::npos);
  EXPECT_NE(r.out.find("100.00% (6,000B) (heap allocation functions)"), std::string::npos);
  EXPECT_NE(r.out.find("->83.33% (5,000B) 0x401200: load_config (prog.cc:30)"), std::string::npos);
  EXPECT_NE(r.out.find("5.859^"), std::string::npos);  // the graph's top: 6000 B in KB
}

}  // namespace
}  // namespace memloupe::report
