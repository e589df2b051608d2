// The dump's line format (docs/DUMP.md). Whole traces are covered by the golden
// tests (tests/golden/); these pin down the details.
#include "reader/dump.h"

#include <gtest/gtest.h>

namespace memloupe::reader {
namespace {

std::string line(const format::Event& e, const SymbolTable& symbols = {}) {
  std::string out;
  dump_event(e, symbols, out);
  return out;
}

TEST(Dump, TimesAreExactMilliseconds) {
  EXPECT_EQ(format_time(0), "0.000000ms");
  EXPECT_EQ(format_time(1), "0.000001ms");
  EXPECT_EQ(format_time(1'234'567), "1.234567ms");
  EXPECT_EQ(format_time(3'600'000'000'000), "3600000.000000ms");
  EXPECT_EQ(format_time(UINT64_MAX), "18446744073709.551615ms");
}

TEST(Dump, BacktraceFramesAndInlining) {
  SymbolTable symbols;
  symbols[0x10] = {{"inner", "a.h", 3, 0}, {"outer", "a.c", 10, 2}};
  symbols[0x20] = {{"", "", 0, 0}};
  symbols[0x30] = {};  // known to have no frames
  const uint64_t bt[] = {0x10, 0x20, 0x30, 0x40};
  format::Alloc a;
  a.id = format::AllocId{7};
  a.time_ns = 1500;
  a.size = 24;
  a.backtrace = bt;
  EXPECT_EQ(line(a, symbols),
            "alloc id=7 t=0.001500ms thread=0 func=malloc size=24 n=1 "
            "bt=[0x10 inner (a.h:3) | outer (a.c:10:2) ; 0x20 ?? ; 0x30 ; 0x40]");
  a.backtrace = {};
  a.address = 0xabc;
  a.alignment = 32;
  a.realloc_of = format::AllocId{3};
  a.func = format::Func::NewArrayAligned;
  EXPECT_EQ(line(a), "alloc id=7 t=0.001500ms thread=0 func=\"operator new[](align)\" size=24 n=1 "
                     "align=32 addr=0xabc realloc_of=3 bt=[]");
}

TEST(Dump, TextFromTheTraceCannotBreakTheLine) {
  SymbolTable symbols;
  symbols[0x1] = {{"evil\nname\\", "f\"ile\t.c", 1, 1}};
  const uint64_t bt[] = {0x1};
  format::Alloc a;
  a.backtrace = bt;
  const std::string text = line(a, symbols);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_NE(text.find("evil\\x0aname\\\\ (f\"ile\\x09.c:1:1)"), std::string::npos) << text;
  EXPECT_EQ(line(format::Marker{format::ThreadId{2}, 0, "say \"hi\"\r"}),
            "marker t=0.000000ms thread=2 name=\"say \\\"hi\\\"\\x0d\"");
}

TEST(Dump, KindNamesFollowTheVariant) {
  EXPECT_EQ(event_kind_name(format::Alloc{}), "alloc");
  EXPECT_EQ(event_kind_name(format::Free{}), "free");
  EXPECT_EQ(event_kind_name(format::SymbolDef{}), "symbol");
  EXPECT_EQ(event_kind_name(format::Promote{}), "promote");
  EXPECT_EQ(event_kind_name(format::CallTotals{}), "call_totals");
  // Each kind's line starts with its name.
  EXPECT_EQ(line(format::RssSample{5, 6}).rfind("rss ", 0), 0u);
  EXPECT_EQ(line(format::TraceEnd{0, format::EndReason::Signal}), "trace_end t=0.000000ms reason=signal");
}

TEST(Dump, CountsAndMeanBacktraceLength) {
  EventCounts counts;
  EXPECT_EQ(counts.mean_backtrace_length(), "0");
  const uint64_t three[] = {1, 2, 3}, four[] = {1, 2, 3, 4};
  format::Alloc a;
  a.time_ns = 10;
  a.backtrace = three;
  counts.add(a);
  a.time_ns = 30;
  a.backtrace = four;
  counts.add(a);
  counts.add(format::SymbolDef{});  // no time
  counts.add(format::Free{format::AllocId{0}, {}, 20, format::Func::Free});
  EXPECT_EQ(counts.events, 4u);
  EXPECT_EQ(counts.allocs(), 2u);
  EXPECT_EQ(counts.by_kind[EventCounts::variant_index<format::Free>()], 1u);
  EXPECT_EQ(counts.mean_backtrace_length(), "3.5");
  EXPECT_EQ(counts.first_time_ns, 10u);
  EXPECT_EQ(counts.last_time_ns, 30u);
}

}  // namespace
}  // namespace memloupe::reader
