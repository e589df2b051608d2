#include "symbolize/demangle.h"

#include <gtest/gtest.h>

namespace memloupe::symbolize {
namespace {

TEST(Demangle, ItaniumNamesAreDemangled) {
  EXPECT_EQ(demangle("_ZN2ns6Widget5buildEi"), "ns::Widget::build(int)");
  EXPECT_EQ(demangle("_Znwm"), "operator new(unsigned long)");
}

// Symbols taken from real Rust binaries. Legacy names are Itanium-shaped with a
// "17h<16 hex digits>E" hash element, which the views do not want.
TEST(Demangle, RustLegacyNamesLoseTheirHash) {
  EXPECT_EQ(demangle("_ZN12panic_unwind3imp5panic17exception_cleanup17he4cf772173d90f46E"),
            "panic_unwind::imp::panic::exception_cleanup");
  EXPECT_EQ(demangle("_ZN3foo17h05af221e174051e9E"), "foo");
  // std::rt::lang_start::{{closure}}: the "$u7b$" escapes are decoded too.
  EXPECT_EQ(demangle("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h6a1e7d3c9b0f5e2aE"),
            "std::rt::lang_start::{{closure}}");
}

TEST(Demangle, RustV0Names) {
  EXPECT_EQ(demangle("_RNvCs15kBYyAo9fc_7mycrate7example"), "mycrate::example");
  EXPECT_EQ(demangle("_RNvCs6KtT2fMGqXk_8infiloop4main"), "infiloop::main");
  EXPECT_EQ(demangle("_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate"),
            "<std::path::PathBuf>::new");
  EXPECT_EQ(demangle("_RNvC1a4main"), "a::main");
  EXPECT_EQ(demangle("_RX"), "_RX");  // malformed: as given
}

TEST(Demangle, OtherNamesAreLeftAlone) {
  EXPECT_EQ(demangle("malloc"), "malloc");
  EXPECT_EQ(demangle("f"), "f");  // not "float"
  EXPECT_EQ(demangle("_Z"), "_Z");  // malformed: as given
  EXPECT_EQ(demangle(nullptr), "");
}

}  // namespace
}  // namespace memloupe::symbolize
