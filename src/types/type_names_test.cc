#include "types/type_names.h"

#include <gtest/gtest.h>

namespace memloupe::types {
namespace {

TEST(TypeNames, QualifiedNameDropsReturnTypeAndParameters) {
  EXPECT_EQ(qualified_name("std::__new_allocator<std::pair<int const, long> >::allocate(unsigned long, void const*)"),
            "std::__new_allocator<std::pair<int const, long> >::allocate");
  EXPECT_EQ(qualified_name("std::_MakeUniq<ns::Poly>::__single_object std::make_unique<ns::Poly, int&>(int&)"),
            "std::make_unique<ns::Poly, int&>");
  EXPECT_EQ(qualified_name("(anonymous namespace)::Foo::Foo(int) const"), "(anonymous namespace)::Foo::Foo");
  EXPECT_EQ(qualified_name("main"), "main");
}

TEST(TypeNames, ComponentsSplitAtTopLevelOnly) {
  const auto parts = components("a::B<c::D, e::F<g::H> >::f");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "a");
  EXPECT_EQ(parts[1], "B<c::D, e::F<g::H> >");
  EXPECT_EQ(parts[2], "f");
}

TEST(TypeNames, BaseName) {
  EXPECT_EQ(base_name("vector<int>"), "vector");
  EXPECT_EQ(base_name("Plain"), "Plain");
}

TEST(TypeNames, ConstructorClass) {
  EXPECT_EQ(constructor_class("ns::Record::Record(int)"), "ns::Record");
  EXPECT_EQ(constructor_class("ns::Box<int>::Box(int const&)"), "ns::Box<int>");
  EXPECT_EQ(constructor_class("ns::Record::reset(int)"), "");
  EXPECT_EQ(constructor_class("free_function(int)"), "");
}

TEST(TypeNames, TidyRemovesOnlyTheSpaceBeforeClosingBrackets) {
  EXPECT_EQ(tidy_type_name("std::pair<int const, std::vector<int> >"), "std::pair<int const, std::vector<int>>");
}

}  // namespace
}  // namespace memloupe::types
