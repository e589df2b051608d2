#include "support/test_profile.h"

#include <random>

namespace memloupe::report::testing {

// Four sites over four 1 ms buckets (bytes/objects):
//
//   site  stack (outermost first)                  allocated  peak      live=leaked
//   S0    main > make_widgets > Widget::Widget*    1000/10    1000/10   200/2
//   S1    main > load_config                       5000/5     5000/5    0
//   S2    main > load_config > parse;token         300/3      0         300/3
//   S3    main > [libfake.so+0x1000]               50/1       0         0
//   (* inlined into make_widgets at the same address)
//
//   bucket  S0 alloc/freed/leaked     S1 alloc/freed   S2 alloc/leaked   S3 alloc/freed
//   0       500/0/0                   -                -                 50/50
//   1       500/0/200                 5000/0           -                 -
//   2       0/300/0                   0/5000           -                 -
//   3       0/500/0                   -                300/300           -
//
// Heap at the end of each bucket: 500, 6000, 700, 500. The peak, 6000 bytes, is at
// 1.5 ms (S0 1000 + S1 5000).
Profile small_profile() {
  Profile p;
  p.info.mode = format::Mode::Sampled;
  p.info.bytes_per_sample = 4096;
  p.info.executable = "/usr/bin/prog";
  p.info.argv = {"/usr/bin/prog", "--fast"};
  p.info.start_wall_ns = 1'700'000'000'000'000'000;
  p.duration_ns = 4'000'000;
  p.selection_end_ns = p.duration_ns;

  p.mappings = {{0x400000, 0x500000, 0, "/usr/bin/prog", "abcd1234"},
                {0x7f0000000000, 0x7f0000100000, 0, "/nonexistent/libfake.so", ""}};
  auto loc = [&](uint64_t address, uint32_t mapping, std::vector<SourceFrame> frames) {
    p.locations.push_back({address, MappingId{mapping}, std::move(frames)});
    return LocationId{static_cast<uint32_t>(p.locations.size() - 1)};
  };
  LocationId main_ = loc(0x401010, 0, {{"main", "prog.cc", 50, 3}});
  LocationId widgets = loc(0x401100, 0, {{"Widget::Widget", "widget.h", 7, 0}, {"make_widgets", "prog.cc", 20, 0}});
  LocationId config = loc(0x401200, 0, {{"load_config", "prog.cc", 30, 0}});
  LocationId parse = loc(0x401300, 0, {{"parse;token", "prog.cc", 40, 0}});
  LocationId fake = loc(0x7f0000001000, 1, {});

  auto amount = [](double bytes, double objects) { return Amount{bytes, objects}; };
  Site s0{{widgets, main_}, {amount(1000, 10), amount(200, 2), amount(1000, 10), amount(200, 2)}, {}};
  s0.buckets = {{0, amount(500, 5), {}, {}}, {1, amount(500, 5), {}, amount(200, 2)},
                {2, {}, amount(300, 3), {}}, {3, {}, amount(500, 5), {}}};
  Site s1{{config, main_}, {amount(5000, 5), {}, amount(5000, 5), {}}, {}};
  s1.buckets = {{1, amount(5000, 5), {}, {}}, {2, {}, amount(5000, 5), {}}};
  Site s2{{parse, config, main_}, {amount(300, 3), amount(300, 3), {}, amount(300, 3)}, {}};
  s2.buckets = {{3, amount(300, 3), {}, amount(300, 3)}};
  Site s3{{fake, main_}, {amount(50, 1), {}, {}, {}}, {}};
  s3.buckets = {{0, amount(50, 1), amount(50, 1), {}}};
  p.sites = {s0, s1, s2, s3};

  p.bucket_count = 4;
  p.bucket_ns = 1'000'000;
  p.heap = {{0, 0}, {500'000, 550}, {1'000'000, 500}, {1'500'000, 6000}, {2'500'000, 700}, {3'500'000, 500}};
  p.rss = {{0, 100'000}, {2'000'000, 180'000}, {4'000'000, 150'000}};
  p.peak = {1'500'000, 6000};
  p.markers = {{2'000'000, "phase 2"}};
  return p;
}

// A trace far bigger than any page should carry: 8,000 sites with stacks 40
// frames deep drawn from 5,000 functions, busy in every one of 100 buckets.
Profile huge_profile() {
  Profile p = small_profile();
  p.sites.clear();
  p.locations.clear();
  std::mt19937_64 rng(42);
  for (uint32_t f = 0; f < 5000; ++f) {
    std::string name = "namespace_" + std::to_string(f % 50) + "::Class" + std::to_string(f) +
                       "::a_rather_long_method_name_for_realism<std::vector<int>>(int, char const*)";
    p.locations.push_back({0x400000u + f * 16, MappingId{0}, {{name, "src/file" + std::to_string(f) + ".cc", f, 0}}});
  }
  p.bucket_count = 100;
  for (int s = 0; s < 8000; ++s) {
    Site site;
    for (int d = 0; d < 40; ++d) site.stack.push_back(LocationId{static_cast<uint32_t>(rng() % 5000)});
    for (uint32_t b = 0; b < 100; ++b) {
      double v = static_cast<double>(rng() % 1'000'000'000);
      site.buckets.push_back({b, {v, v / 7}, {v / 2, v / 14}, {v / 3, v / 21}});
      site.values.allocated += Amount{v, v / 7};
    }
    site.values.peak = site.values.allocated;
    site.values.leaked = {site.values.allocated.bytes / 3, site.values.allocated.objects / 21};
    p.sites.push_back(std::move(site));
  }
  p.heap.clear();
  for (uint64_t t = 0; t < 100'000; ++t) p.heap.push_back({t * 40, static_cast<double>(rng() % 1'000'000'000)});
  p.rss = p.heap;
  for (int m = 0; m < 5000; ++m) p.markers.push_back({static_cast<uint64_t>(m) * 800, "marker " + std::to_string(m)});
  return p;
}

Profile many_sites_profile() {
  Profile p = small_profile();
  p.info.mode = format::Mode::All;
  p.sites.clear();
  p.locations.clear();
  for (uint32_t f = 0; f < 2000; ++f) {
    p.locations.push_back({0x400000u + f * 16, MappingId{0},
                           {{"module_" + std::to_string(f % 40) + "::function_" + std::to_string(f), "src/m" +
                             std::to_string(f % 40) + ".cc", f, 0}}});
  }
  p.bucket_count = 100;
  for (uint32_t s = 0; s < 60'000; ++s) {
    Site site;
    // Innermost first: a distinct leaf-and-caller pair per site, under shared outer frames.
    site.stack.push_back(LocationId{1000 + s % 1000});
    site.stack.push_back(LocationId{s / 1000 + 100});
    for (uint32_t d = 0; d < 10; ++d) site.stack.push_back(LocationId{(s / 6000 + d) % 100});
    const double bytes = 64.0 * (1 + s % 977);
    site.buckets.push_back({s % 100, {bytes, 1}, {}, {}});
    site.values.allocated = {bytes, 1};
    p.sites.push_back(std::move(site));
  }
  return p;
}

}  // namespace memloupe::report::testing
