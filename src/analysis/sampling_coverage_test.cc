// Do the 95% intervals of a sampled trace cover the exact values?
//
// A deterministic allocation script is run through a simulated recorder that
// samples bytes as a Poisson process of rate 1/bytes_per_sample (exponential gaps
// from a seeded generator, written here independently of the model). For each
// of 200 seeds, and for each site and measure, we check whether the exact value
// (computed from the script, not by the model) lies in the model's interval.
//
// Tolerance: if the true coverage is 95%, the observed rate over N = 200 × sites
// checks (independent across seeds) has standard deviation √(0.95·0.05/N) ≈ 0.8%
// for 800 checks; we require [91%, 99.5%], about 5 standard deviations below,
// so correct code fails with probability < 10^-6. Garwood's interval is
// conservative (coverage ≥ 95%); Horvitz–Thompson's normal interval is
// approximate and is checked on sites with enough samples to make it meaningful.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "analysis/model.h"
#include "support/test_script.h"

namespace memloupe::analysis {
namespace {

constexpr uint64_t kBytesPerSample = 16 * 1024;

struct Block {
  uint64_t site;
  uint64_t size;
  uint64_t alloc_t;
  std::optional<uint64_t> free_t;
};

// The program: four sites with different size profiles; some blocks leak.
std::vector<Block> program() {
  std::vector<Block> blocks;
  uint64_t t = 0;
  for (int i = 0; i < 12000; ++i) {
    t += 10;
    const uint64_t site = i % 4 == 0 ? 0 : i % 4 == 1 ? 1 : i % 4 == 2 ? 2 : 3;
    uint64_t size = 0;
    switch (site) {
      case 0: size = 64; break;                          // many small
      case 1: size = 4096; break;                        // pages
      case 2: size = i % 80 == 2 ? 200 * 1024 : 512; break;  // a few large among small
      case 3: size = 16 + (i * 37) % 2000; break;        // a spread
    }
    const bool leaks = i % 7 == 0;
    blocks.push_back(Block{site, size, t, leaks ? std::nullopt : std::optional<uint64_t>(t + 5 + (i % 13) * 100)});
  }
  return blocks;
}

struct Exact {
  double bytes = 0;
  double objects = 0;
};

// One sampled run of `blocks` with the recorder's rule (a Poisson process of
// sample points on the byte line, seeded), and the exact live set at its peak.
struct SampledRun {
  Model model;
  Exact peak_truth;  // blocks live right after the model's peak allocation
};

// A rate change (memloupe_set_rate) at `time`: from the first event at or after
// it on, one sample per `bytes_per_sample` bytes.
struct RateSwitch {
  uint64_t time = UINT64_MAX;
  uint32_t bytes_per_sample = 0;
};

SampledRun sample_run(const std::vector<Block>& blocks, uint64_t seed, RateSwitch change = {}) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.0 / kBytesPerSample);
  double to_next = gap(rng);  // bytes from the current position to the next sample point
  uint32_t mean = 0;         // 0: the header's

  testing::Script s(format::Mode::Sampled, kBytesPerSample);
  // Events must be in time order: collect then sort by time.
  std::vector<std::tuple<uint64_t, int, size_t>> order;  // time, kind (0 alloc, 1 free), block
  for (size_t i = 0; i < blocks.size(); ++i) {
    order.emplace_back(blocks[i].alloc_t, 0, i);
    if (blocks[i].free_t) order.emplace_back(*blocks[i].free_t, 1, i);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::optional<format::AllocId>> ids(blocks.size());
  std::map<uint64_t, size_t> position_of_id;  // sampled AllocId -> its place in `order`
  uint64_t last_t = 0;
  for (size_t at = 0; at < order.size(); ++at) {
    auto [time, kind, i] = order[at];
    last_t = std::max(last_t, time);
    const Block& b = blocks[i];
    if (mean == 0 && time >= change.time) {  // the new rate's first gap, as the recorder draws it for the caller
      mean = change.bytes_per_sample;
      gap = std::exponential_distribution<double>(1.0 / mean);
      to_next = gap(rng);
    }
    if (kind == 0) {
      uint32_t n = 0;
      double left = static_cast<double>(b.size);
      while (to_next < left) {
        ++n;
        left -= to_next;
        to_next = gap(rng);
      }
      to_next -= left;
      if (n > 0) {
        ids[i] = s.alloc(time, b.size, {0x1000 + b.site}, 0, n);
        std::get<format::Alloc>(s.events.back()).bytes_per_sample = mean;
        position_of_id[ids[i]->value] = at;
      }
    } else if (ids[i]) {
      s.free(*ids[i], time);
    }
  }
  s.end(last_t + 10'000);
  SampledRun run{s.run(), {}};
  // The truth at the peak: every block allocated, and not freed, up to and
  // including the peak's allocation in event order.
  if (const auto& peak = run.model.overview.peak.alloc) {
    const size_t last = position_of_id.at(peak->value);
    for (size_t at = 0; at <= last; ++at) {
      auto [time, kind, i] = order[at];
      const double sign = kind == 0 ? 1 : -1;
      run.peak_truth.bytes += sign * static_cast<double>(blocks[i].size);
      run.peak_truth.objects += sign;
    }
  }
  return run;
}

// fn(site, count, truth) for each site's allocated and leaked Count in `m`
// (the script's frame is 0x1000 + site) against the exact values.
template <class Fn>
void each_site(const Model& m, const std::map<uint64_t, Exact>& allocated, const std::map<uint64_t, Exact>& leaked,
               Fn fn) {
  std::map<uint64_t, const Metrics*> by_site;
  for (uint32_t id = 0; id < m.aggregate.stacks.size(); ++id) {
    by_site[m.aggregate.frames(StackId{id})[0] - 0x1000] = &m.aggregate.stacks[id].metrics;
  }
  for (auto [metric, exact] : {std::pair{Metric::Allocated, &allocated}, std::pair{Metric::Leaked, &leaked}}) {
    for (const auto& [site, truth] : *exact) fn(site, by_site.count(site) ? (*by_site.at(site))[metric] : Count{}, truth);
  }
}

bool covers(const Estimate& e, double truth) { return e.lo <= truth && (!e.bounded || truth <= e.hi); }

TEST(SamplingCoverage, IntervalsCoverExactValues) {
  const std::vector<Block> blocks = program();
  // Exact answers per site, straight from the script.
  std::map<uint64_t, Exact> allocated, leaked;
  Exact all_allocated, all_leaked;
  for (const Block& b : blocks) {
    allocated[b.site].bytes += b.size;
    allocated[b.site].objects += 1;
    if (!b.free_t) {
      leaked[b.site].bytes += b.size;
      leaked[b.site].objects += 1;
    }
  }
  for (const auto& [site, e] : allocated) all_allocated.bytes += e.bytes, all_allocated.objects += e.objects;
  for (const auto& [site, e] : leaked) all_leaked.bytes += e.bytes, all_leaked.objects += e.objects;

  int checks = 0, bytes_covered = 0, object_checks = 0, objects_covered = 0;
  // Every other interval a view prints (summary's totals and its peak line):
  // bytes and blocks, each over the 200 seeds.
  int view_checks = 0, view_covered = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const SampledRun run = sample_run(blocks, seed);
    const Model& m = run.model;
    const Estimator& e = m.aggregate.estimator;

    each_site(m, allocated, leaked, [&](uint64_t, const Count& c, const Exact& truth) {
      ++checks;
      bytes_covered += covers(e.bytes(c), truth.bytes);
      if (c.blocks >= 10) {
        ++object_checks;
        objects_covered += covers(e.objects(c), truth.objects);
      }
    });
    const Estimator& oe = m.overview.estimator;
    for (auto [count, truth] : {std::pair{m.aggregate.totals[Metric::Allocated], all_allocated},
                                std::pair{m.aggregate.totals[Metric::Leaked], all_leaked},
                                std::pair{m.overview.peak.live, run.peak_truth}}) {
      view_checks += 2;
      view_covered += covers(oe.bytes(count), truth.bytes) + covers(oe.objects(count), truth.objects);
    }
  }
  const double bytes_rate = static_cast<double>(bytes_covered) / checks;
  const double objects_rate = static_cast<double>(objects_covered) / object_checks;
  const double view_rate = static_cast<double>(view_covered) / view_checks;
  RecordProperty("bytes_coverage", std::to_string(bytes_rate));
  RecordProperty("objects_coverage", std::to_string(objects_rate));
  std::printf("bytes coverage %.4f over %d, objects coverage %.4f over %d, totals and peak %.4f over %d\n",
              bytes_rate, checks, objects_rate, object_checks, view_rate, view_checks);
  EXPECT_EQ(checks, 200 * 8);
  EXPECT_GE(bytes_rate, 0.91);
  EXPECT_LE(bytes_rate, 0.995);
  EXPECT_GT(object_checks, 200 * 4);
  EXPECT_GE(objects_rate, 0.91);
  EXPECT_LE(objects_rate, 0.995);
  EXPECT_EQ(view_checks, 200 * 6);
  EXPECT_GE(view_rate, 0.91);
}

// The case seen on a real program: at the peak a few large blocks are sampled
// and the many small ones live beside them mostly are not. The sampled blocks
// then say nothing about how many small ones they hide, and the interval must
// not be [4, 4] (it printed "live blocks: 4 [4, 4]" where the truth was 3,722).
TEST(SamplingCoverage, PeakOfFewLargeAmongManySmallBlocks) {
  std::vector<Block> blocks;
  uint64_t t = 0;
  for (int i = 0; i < 300; ++i) blocks.push_back(Block{0, 16, t += 10, 1'000'000});
  for (int i = 0; i < 4; ++i) blocks.push_back(Block{1, 1024 * 1024, t += 10, 1'000'000});
  int covered_bytes = 0, covered_blocks = 0;
  const int seeds = 200;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const SampledRun run = sample_run(blocks, seed);
    const Estimator& e = run.model.overview.estimator;
    ASSERT_EQ(run.peak_truth.objects, 304);
    covered_bytes += covers(e.bytes(run.model.overview.peak.live), run.peak_truth.bytes);
    covered_blocks += covers(e.objects(run.model.overview.peak.live), run.peak_truth.objects);
  }
  std::printf("peak bytes covered %d/%d, peak blocks covered %d/%d\n", covered_bytes, seeds, covered_blocks, seeds);
  EXPECT_GE(covered_bytes, seeds * 91 / 100);
  EXPECT_GE(covered_blocks, seeds * 91 / 100);
}

// memloupe_set_rate half-way: the rate goes 16x up. Site 0 allocates only
// before the change, site 1 only after, site 2 on both sides; every interval
// (per site, allocated and leaked, and the totals) must cover the exact value
// at the 95% level, with each sample weighed by the rate it was taken at.
TEST(SamplingCoverage, RateChangedMidRun) {
  std::vector<Block> blocks;
  uint64_t t = 0;
  for (int i = 0; i < 8000; ++i) {
    const bool before = i < 4000;
    const uint64_t site = i % 2 == 0 ? 2 : before ? 0 : 1;
    const uint64_t size = site == 2 ? 96 + (i * 53) % 3000 : 1024;
    blocks.push_back(Block{site, size, t += 10, i % 5 == 0 ? std::nullopt : std::optional<uint64_t>(t + 7)});
  }
  std::map<uint64_t, Exact> allocated, leaked;
  Exact total;
  for (const Block& b : blocks) {
    allocated[b.site].bytes += b.size;
    total.bytes += b.size;
    if (!b.free_t) leaked[b.site].bytes += b.size;
  }
  // The change comes right before block 4000's allocation (at 10·4001).
  const RateSwitch change{10 * 4001, kBytesPerSample / 16};
  int checks = 0, covered = 0, after_checks = 0, after_covered = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const SampledRun run = sample_run(blocks, seed, change);
    const Model& m = run.model;
    const Estimator& e = m.aggregate.estimator;
    each_site(m, allocated, leaked, [&](uint64_t site, const Count& c, const Exact& truth) {
      const bool ok = covers(e.bytes(c), truth.bytes);
      ++checks, covered += ok;
      if (site == 1) ++after_checks, after_covered += ok;
    });
    ++checks, covered += covers(e.bytes(m.aggregate.totals[Metric::Allocated]), total.bytes);
  }
  const double rate = static_cast<double>(covered) / checks;
  const double after_rate = static_cast<double>(after_covered) / after_checks;
  std::printf("rate change: coverage %.4f over %d, of the site after the change %.4f over %d\n", rate, checks,
              after_rate, after_checks);
  EXPECT_EQ(checks, 200 * 7);
  EXPECT_GE(rate, 0.91);
  EXPECT_LE(rate, 0.995);
  EXPECT_GE(after_rate, 0.88);  // 400 checks: 5 sigma is 5.5%
}

}  // namespace
}  // namespace memloupe::analysis
