#include "analysis/type_counts.h"

#include <gtest/gtest.h>

#include "support/test_script.h"

namespace memloupe::analysis {
namespace {

using testing::Script;
using types::SiteType;
using types::TypeRule;
using types::TypeShape;

constexpr uint64_t kPointSite = 0x1000, kBufferSite = 0x2000, kPlainSite = 0x3000, kMixedSite = 0x4000;

types::TypeTable table() {
  types::TypeTable t;
  t[kPointSite] = SiteType{"Point", 12, 12, TypeShape::Object, TypeRule::InlinedConstructor};
  t[kBufferSite] = SiteType{"Elem[]", 8, 0, TypeShape::Array, TypeRule::Allocator};
  t[kPlainSite] = SiteType{"", 48, 48, TypeShape::Object, TypeRule::Unknown};
  return t;
}

const TypeCount& row(const std::vector<TypeCount>& rows, const std::string& name) {
  for (const TypeCount& r : rows)
    if (r.type == name) return r;
  ADD_FAILURE() << name << " missing";
  return rows.front();
}

TEST(TypeCounts, GroupsStacksByTheirSitesType) {
  Script s;
  // Points from two call paths (one site), 2 of 5 freed; two Elem buffers
  // (8 + 32 elements); 3 blocks of an untyped one-size site; 2 of a mixed one.
  for (int i = 0; i < 3; ++i) s.alloc(10 + i, 12, {kPointSite, 0xa});
  const auto p4 = s.alloc(20, 12, {kPointSite, 0xb});
  const auto p5 = s.alloc(21, 12, {kPointSite, 0xb});
  s.alloc(30, 64, {kBufferSite, 0xa});
  s.alloc(31, 256, {kBufferSite, 0xa});
  for (int i = 0; i < 3; ++i) s.alloc(40 + i, 48, {kPlainSite});
  s.alloc(50, 10, {kMixedSite});
  s.alloc(51, 20, {kMixedSite});
  s.free(p4, 60);
  s.free(p5, 61);
  s.end(100);
  const Model m = s.run();
  const std::vector<TypeCount> rows = count_types(m, table(), TypeOrder::Count);
  ASSERT_EQ(rows.size(), 4u);
  const Estimator& e = m.aggregate.estimator;

  EXPECT_EQ(rows[0].type, "Elem[]");  // most objects first
  EXPECT_EQ(rows[0].objects(Metric::Allocated, e).value, 40);
  EXPECT_EQ(e.objects(rows[0].metrics[Metric::Allocated]).value, 2);  // blocks

  const TypeCount& point = row(rows, "Point");
  EXPECT_TRUE(point.known);
  EXPECT_EQ(point.stacks.size(), 2u);
  EXPECT_EQ(point.objects(Metric::Allocated, e).value, 5);
  EXPECT_EQ(point.objects(Metric::Leaked, e).value, 3);
  EXPECT_EQ(e.bytes(point.metrics[Metric::Allocated]).value, 60);

  const TypeCount& plain = row(rows, "(unknown, 48 B)");
  EXPECT_FALSE(plain.known);
  EXPECT_EQ(plain.objects(Metric::Allocated, e).value, 3);
  EXPECT_EQ(row(rows, "(unknown, mixed sizes)").objects(Metric::Allocated, e).value, 2);

  // --type's stacks: the two call paths of Point at depth 2, merged at depth 1.
  EXPECT_EQ(type_stacks(m, point, 2, 0).size(), 2u);
  const std::vector<TypeStack> merged = type_stacks(m, point, 1, 0);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].objects.value, 5);
  // --min-count drops the path with fewer objects (2 of them through 0xb).
  EXPECT_EQ(type_stacks(m, point, 2, 3).size(), 1u);
}

TEST(TypeCounts, ATableTheCountsContradictIsNotBelieved) {
  Script s;
  s.alloc(10, 12, {kPointSite});
  s.alloc(11, 24, {kPointSite});  // not sizeof(Point): not a Point site after all
  s.alloc(12, 60, {kBufferSite}); // not a multiple of 8
  s.end(100);
  const Model m = s.run();
  const std::vector<TypeCount> rows = count_types(m, table(), TypeOrder::Bytes);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].type, "(unknown, mixed sizes)");
  EXPECT_EQ(stack_type(m.aggregate, StackId{0}, table()), nullptr);
}

TEST(TypeCounts, SampledBufferElementsScaleTheBytesInterval) {
  Script s(format::Mode::Sampled, 1024);
  s.alloc(10, 8000, {kBufferSite}, 0, 8);
  s.end(100);
  const Model m = s.run();
  const std::vector<TypeCount> rows = count_types(m, table(), TypeOrder::Count);
  ASSERT_EQ(rows.size(), 1u);
  const Estimate elements = rows[0].objects(Metric::Allocated, m.aggregate.estimator);
  const Estimate bytes = m.aggregate.estimator.bytes(rows[0].metrics[Metric::Allocated]);
  EXPECT_DOUBLE_EQ(elements.value, bytes.value / 8);
  EXPECT_DOUBLE_EQ(elements.lo, bytes.lo / 8);
  EXPECT_DOUBLE_EQ(elements.hi, bytes.hi / 8);
  EXPECT_LT(elements.lo, elements.value);
}

}  // namespace
}  // namespace memloupe::analysis
