// memloupe_set_rate end to end: a program that raises its sampling rate 256x
// half-way (tests/recorder_use/programs/rate_phases.c) under the real preload
// library; the trace records the change, and the estimate of the site that
// allocates only after it is right, interval and all.
#include <gtest/gtest.h>

#include <sstream>

#include "recorder_use_fixture.h"

namespace memloupe::testing {
namespace {

std::string built(const std::string& name) { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/" + name; }

struct SiteEstimate {
  double bytes = 0, lo = 0, hi = 0;
  bool found = false;
};

// The row of `top --csv` whose frames name `function`.
SiteEstimate site(const std::string& csv, const std::string& function) {
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> names;
  std::istringstream h(header);
  for (std::string f; std::getline(h, f, ',');) names.push_back(f);
  while (std::getline(in, line)) {
    if (line.find(function) == std::string::npos) continue;
    std::vector<std::string> cells;
    std::istringstream l(line);
    for (std::string f; std::getline(l, f, ',');) cells.push_back(f);
    SiteEstimate s;
    s.found = true;
    for (size_t i = 0; i < names.size() && i < cells.size(); ++i) {
      if (names[i] == "allocated_bytes") s.bytes = std::stod(cells[i]);
      if (names[i] == "allocated_bytes_lo") s.lo = std::stod(cells[i]);
      if (names[i] == "allocated_bytes_hi") s.hi = std::stod(cells[i]);
    }
    return s;
  }
  return {};
}

// The site's interval covers `truth` and is at most `max_width` wide.
void expect_covers(const std::string& csv, const std::string& function, double truth, double max_width) {
  const SiteEstimate s = site(csv, function);
  ASSERT_TRUE(s.found) << function << "\n" << csv;
  EXPECT_LE(s.lo, truth) << function << "\n" << csv;
  EXPECT_GE(s.hi, truth) << function << "\n" << csv;
  EXPECT_LT(s.hi - s.lo, max_width) << function << "\n" << csv;
}

class RateChange : public RecorderUse {
 protected:
  // Runs rate_phases with `blocks` blocks of 1000 bytes per phase; the `top` CSV.
  std::string record(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"run", "--every", "1MiB", "-o", "t.trace", "--", built("rate_phases"), "20000",
                                  "1000"};
    args.insert(args.end(), extra.begin(), extra.end());
    // A fixed seed: the same sampling decisions every run, so a 95% interval
    // that covers the truth once covers it every time (a random seed would miss
    // it in one run of twenty, as one CI run did).
    const Finished f = run(args, "", Environment{{{"MEMLOUPE_SEED", "11"}}});
    EXPECT_EQ(f.status, 0) << f.err;
    EXPECT_EQ(f.out, "kept 40000 blocks\n");
    const Finished top = run({"top", "t.trace", "--by", "allocated", "--csv", "-n", "20"});
    EXPECT_EQ(top.status, 0) << top.err;
    return top.out;
  }
};

TEST_F(RateChange, SiteAllocatedAfterTheChangeIsEstimatedAtItsRate) {
  const std::string csv = record({});
  // Phase 2: 20,000,000 bytes sampled at one per 4096 (~4,900 samples): an
  // interval of about ±3%. Weighed at the header's 1 MiB it would read ~5 GB.
  expect_covers(csv, "phase_two_site", 20e6, 0.1 * 20e6);
  // Phase 1: the same bytes at one sample per MiB (~19 samples): a wide interval.
  expect_covers(csv, "phase_one_site", 20e6, 2 * 20e6);
  EXPECT_GT(site(csv, "phase_one_site").hi - site(csv, "phase_one_site").lo, 0.5 * 20e6) << csv;

  // The trace says when, who and what: one rate change, one depth change.
  const Finished dump = run({"dump", "t.trace"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.out.find("rate_change t="), std::string::npos);
  EXPECT_NE(dump.out.find(" every=4096\n"), std::string::npos);
  EXPECT_NE(dump.out.find("depth_change t="), std::string::npos);
  EXPECT_NE(dump.out.find(" depth=32\n"), std::string::npos);
  // No analysis index (it holds one rate), and `info` says why.
  const Finished info = run({"info", "t.trace"});
  EXPECT_NE(info.out.find("sampling rate changed while it ran"), std::string::npos) << info.out;
}

// Phase 2 on another thread, whose pending gap was drawn at the old rate: its
// first sample after the change is recorded at the old rate (between two
// RateChange events), the rest at the new; the estimate covers the truth, its
// interval widened by that one sample's weight of 1 MiB.
TEST_F(RateChange, AnotherThreadSwitchesAtItsNextSample) {
  expect_covers(record({"thread"}), "phase_two_site", 20e6, 0.5 * 20e6);
  const Finished dump = run({"dump", "t.trace"});
  size_t back_to_old = 0;
  for (size_t at = dump.out.find(" every=1048576\n"); at != std::string::npos;
       at = dump.out.find(" every=1048576\n", at + 1))
    ++back_to_old;
  EXPECT_EQ(back_to_old, 1u) << "the second thread's first sample, at the old mean";
}

// Out of range, or in --all mode (no rate to change): -1, nothing recorded.
TEST_F(RateChange, RefusedInAllMode) {
  const Finished f = run({"run", "--all", "-o", "t.trace", "--", built("rate_phases"), "10", "100"});
  EXPECT_EQ(f.status, 3) << f.err;  // rate_phases: memloupe_set_rate returned -1
}

}  // namespace
}  // namespace memloupe::testing
