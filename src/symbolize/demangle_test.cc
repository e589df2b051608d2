#include "symbolize/demangle.h"

#include <gtest/gtest.h>

namespace memloupe::symbolize {
namespace {

TEST(Demangle, ItaniumNamesAreDemangled) {
  EXPECT_EQ(demangle("_ZN2ns6Widget5buildEi"), "ns::Widget::build(int)");
  EXPECT_EQ(demangle("_Znwm"), "operator new(unsigned long)");
}

TEST(Demangle, OtherNamesAreLeftAlone) {
  EXPECT_EQ(demangle("malloc"), "malloc");
  EXPECT_EQ(demangle("f"), "f");  // not "float"
  EXPECT_EQ(demangle("_Z"), "_Z");  // malformed: as given
  EXPECT_EQ(demangle(nullptr), "");
}

}  // namespace
}  // namespace memloupe::symbolize
