// `memloupe info` and `memloupe dump` end to end, on the real binary: the sample
// memtrace trace must agree with tests/data/memtrace/README.md, and the exit
// codes and messages of commands.h / trace_input.h must hold.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "cli_run.h"

namespace memloupe::inspect_testing {
namespace {

const std::string kSample = "tests/data/memtrace/viewer_test.ctf";

std::string sample() { return "'" + source_path(kSample) + "'"; }

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(InspectCli, InfoAgreesWithTheSampleTracesReadme) {
  CommandRun r = memloupe("info " + sample());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Each figure of the README, in the words memloupe prints it.
  for (const char* line : {
           "  sample rate 0.1, word size 64, pid 40409\n",
           "  19 location events (19 distinct location codes)\n",
           "  54 allocation events: 25 long-form, 29 short-form\n",
           "  mean backtrace length 19.3 frames\n",
           "  28 promotions, 26 collections\n",
           "format:       memtrace-ctf v2 (version 2)\n",
           "pid:          40409\n",
           "sampling:     sampled, one sample per 80 bytes on average\n",
       }) {
    EXPECT_NE(r.out.find(line), std::string::npos) << "missing: " << line << "in:\n" << r.out;
  }
}

TEST(InspectCli, DumpHasOneLinePerEvent) {
  CommandRun r = memloupe("dump " + sample());
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<std::string, int> kinds;
  uint64_t frames = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const std::string kind = line.substr(0, line.find(' '));
    ++kinds[kind];
    if (kind != "alloc") continue;
    // bt=[a ; b ; c]: frames are separated by " ; ".
    const size_t bt = line.find(" bt=[");
    ASSERT_NE(bt, std::string::npos) << line;
    if (line.compare(bt, 7, " bt=[]") == 0) continue;
    ++frames;
    for (size_t at = line.find(" ; ", bt); at != std::string::npos; at = line.find(" ; ", at + 1)) ++frames;
  }
  EXPECT_EQ(kinds, (std::map<std::string, int>{
                       {"#", 1}, {"symbol", 19}, {"alloc", 54}, {"promote", 28}, {"free", 26}}));
  // 19.3 frames per allocation on average (1043 / 54 = 19.31).
  EXPECT_EQ(frames, 1043u);
}

TEST(InspectCli, MissingFile) {
  const std::string missing = scratch_dir("missing") + "/no-such.trace";
  for (const char* command : {"info", "dump"}) {
    CommandRun r = memloupe(std::string(command) + " '" + missing + "'");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "memloupe: cannot open '" + missing + "': No such file or directory\n");
    EXPECT_EQ(r.out, "");
  }
}

TEST(InspectCli, NotATraceAndNewerVersion) {
  const std::string dir = scratch_dir("not_a_trace");
  write_file(dir + "/text", "hello, world\n");
  CommandRun text = memloupe("info '" + dir + "/text'");
  EXPECT_EQ(text.status, 3);
  EXPECT_NE(text.err.find("not a trace"), std::string::npos) << text.err;

  std::string newer = read_text(source_path(kSample));
  newer[28] = 4;  // the first packet's version field
  write_file(dir + "/v4.ctf", newer);
  CommandRun v4 = memloupe("dump '" + dir + "/v4.ctf'");
  EXPECT_EQ(v4.status, 3);
  EXPECT_NE(v4.err.find("version 4 is newer than this memloupe"), std::string::npos) << v4.err;
}

TEST(InspectCli, DamagedTracePrintsWhatIsReadableThenTheOffset) {
  const std::string dir = scratch_dir("damaged");
  const std::string cut = read_text(source_path(kSample)).substr(0, 1500);  // inside the events packet
  write_file(dir + "/cut.ctf", cut);
  CommandRun dump = memloupe("dump '" + dir + "/cut.ctf'");
  EXPECT_EQ(dump.status, 4);
  // The header line and the 19 locations of the complete second packet.
  EXPECT_EQ(std::count(dump.out.begin(), dump.out.end(), '\n'), 20);
  EXPECT_NE(dump.err.find("trace ends early at offset 1164 after 19 events"), std::string::npos)
      << dump.err;

  CommandRun info = memloupe("info '" + dir + "/cut.ctf'");
  EXPECT_EQ(info.status, 4);
  EXPECT_NE(info.out.find("  19 location events (19 distinct location codes)\n"), std::string::npos);
  EXPECT_NE(info.err.find("offset 1164"), std::string::npos);
}

}  // namespace
}  // namespace memloupe::inspect_testing
