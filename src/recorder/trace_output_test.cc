#include "recorder/trace_output.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace memloupe::recorder {
namespace {

namespace fs = std::filesystem;

int g_failures = 0;
void count_failure() noexcept { ++g_failures; }

class TraceOutputTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("memloupe_output_test." + std::to_string(::getpid()));
    fs::create_directories(dir_);
    g_failures = 0;
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  fs::path dir_;
};

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST_F(TraceOutputTest, QueuesUntilDrainedThenWritesInOrder) {
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "t.trace";
  ASSERT_TRUE(out->open(p.c_str(), false, count_failure));
  out->write_chunk(bytes("first,"));
  out->write_chunk(bytes("second"));
  EXPECT_EQ(slurp(p), "");  // nothing written from the producer side
  out->drain();
  EXPECT_EQ(slurp(p), "first,second");
  out->close();
  EXPECT_EQ(g_failures, 0);
}

TEST_F(TraceOutputTest, AFullQueueIsWrittenByTheProducer) {
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "big.trace";
  ASSERT_TRUE(out->open(p.c_str(), false, count_failure));
  const std::string chunk(1 << 20, 'x');
  for (int i = 0; i < 6; ++i) out->write_chunk(bytes(chunk));  // 6 MiB > the 4 MiB ring
  EXPECT_GE(fs::file_size(p), 3u << 20);
  out->close();
  EXPECT_EQ(fs::file_size(p), 6u << 20);
}

TEST_F(TraceOutputTest, NeverOverwriteNumbersTheFile) {
  const fs::path p = dir_ / "n.trace";
  std::ofstream(p) << "keep";
  auto out = std::make_unique<TraceOutput>();
  ASSERT_TRUE(out->open(p.c_str(), true, count_failure));
  EXPECT_EQ(std::string(out->path()), p.string() + ".1");
  out->close();
  EXPECT_EQ(slurp(p), "keep");
}

TEST_F(TraceOutputTest, MissingDirectoryIsReportedOnce) {
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "no" / "such" / "dir.trace";
  testing::internal::CaptureStderr();
  EXPECT_FALSE(out->open(p.c_str(), false, count_failure));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "memloupe: cannot write trace '" + p.string() +
                     "': No such file or directory; recording disabled\n");
  EXPECT_EQ(g_failures, 1);
}

TEST_F(TraceOutputTest, DiskFullIsReportedOnceAndDataDropped) {
  auto out = std::make_unique<TraceOutput>();
  ASSERT_TRUE(out->open("/dev/full", false, count_failure));
  testing::internal::CaptureStderr();
  out->write_chunk(bytes("a"));
  out->drain();
  out->write_chunk(bytes("b"));
  out->drain();
  out->close();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "memloupe: cannot write trace '/dev/full': No space left on device; recording disabled\n");
  EXPECT_EQ(g_failures, 1);
  EXPECT_TRUE(out->failed());
}

}  // namespace
}  // namespace memloupe::recorder
