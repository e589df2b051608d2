// short_function_name on names as the demangler writes them (nm -C of this
// project's binaries and of a small program built with GCC 12).
#include "report/frame_names.h"

#include <gtest/gtest.h>

namespace memloupe::report {
namespace {

const std::string kString = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";

TEST(ShortFunctionName, NestedTemplatesAndParameters) {
  EXPECT_EQ(short_function_name("std::_Hashtable<" + kString + ", std::pair<" + kString +
                                " const, std::function<void (int)> >, std::__detail::_Hashtable_traits<true, "
                                "false, true> >::_M_insert_unique_node(unsigned long, unsigned long, "
                                "std::__detail::_Hash_node<std::pair<" + kString +
                                " const, std::function<void (int)> >, true>*, unsigned long)"),
            "std::_Hashtable<…>::_M_insert_unique_node()");
  // A return type stays; so do a member template's arguments' "<…>".
  EXPECT_EQ(short_function_name("std::pair<std::_Rb_tree_iterator<CLI::Option*>, bool> std::_Rb_tree<CLI::Option*, "
                                "CLI::Option*, std::_Identity<CLI::Option*>, std::less<CLI::Option*>, "
                                "std::allocator<CLI::Option*> >::_M_insert_unique<CLI::Option*>(CLI::Option*&&)"),
            "std::pair<…> std::_Rb_tree<…>::_M_insert_unique<…>()");
  EXPECT_EQ(short_function_name("evaluate"), "evaluate");
  EXPECT_EQ(short_function_name("std::vector<int>::size() const"), "std::vector<…>::size() const");
}

TEST(ShortFunctionName, Operators) {
  EXPECT_EQ(short_function_name("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
                                "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, "
                                "char const*)"),
            "std::basic_ostream<…>& std::operator<< <…>()");
  EXPECT_EQ(short_function_name("std::ostream::operator<<(int)"), "std::ostream::operator<<()");
  EXPECT_EQ(short_function_name("operator<(A const&, A const&)"), "operator<()");
  EXPECT_EQ(short_function_name("bool operator< <int>(std::vector<int, std::allocator<int> > const&, A const&)"),
            "bool operator< <…>()");
  EXPECT_EQ(short_function_name("A::operator<=>(A const&) const"), "A::operator<=>() const");
  EXPECT_EQ(short_function_name("A::operator->()"), "A::operator->()");
  EXPECT_EQ(short_function_name("std::__detail::_Mod_range_hashing::operator()(unsigned long, unsigned long) const"),
            "std::__detail::_Mod_range_hashing::operator()() const");
  EXPECT_EQ(short_function_name("operator new(unsigned long)"), "operator new()");
}

TEST(ShortFunctionName, LambdasFunctionPointersAndAnonymousNamespaces) {
  EXPECT_EQ(short_function_name("CLI::detail::ltrim(" + kString +
                                "&)::{lambda(char)#1}::operator()(char) const [clone .isra.0]"),
            "CLI::detail::ltrim()::{lambda()#1}::operator()() const [clone .isra.0]");
  EXPECT_EQ(short_function_name("memloupe::cli::add_top_command(CLI::App&)::{lambda()#1}::operator()() const"),
            "memloupe::cli::add_top_command()::{lambda()#1}::operator()() const");
  EXPECT_EQ(short_function_name("apply(int (*)(int), int)"), "apply()");
  EXPECT_EQ(short_function_name("std::_Function_handler<" + kString + " (CLI::App const*, CLI::Error const&), " +
                                kString + " (*)(CLI::App const*, CLI::Error const&)>::_M_invoke(std::_Any_data "
                                "const&, CLI::App const*&&, CLI::Error const&)"),
            "std::_Function_handler<…>::_M_invoke()");
  EXPECT_EQ(short_function_name("memloupe::cli::(anonymous namespace)::run_export(memloupe::cli::(anonymous "
                                "namespace)::Options&)"),
            "memloupe::cli::(anonymous namespace)::run_export()");
  EXPECT_EQ(short_function_name("std::map<(anonymous namespace)::K*, int, std::less<(anonymous namespace)::K*>, "
                                "std::allocator<std::pair<(anonymous namespace)::K* const, int> > "
                                ">::operator[]((anonymous namespace)::K*&&)"),
            "std::map<…>::operator[]()");
  EXPECT_EQ(short_function_name("make_unique<(anonymous namespace)::Node>"), "make_unique<…>");
}

TEST(ShortFunctionName, NamesCutShort) {
  // The HTML data cuts names at a byte limit; a list left open is closed.
  EXPECT_EQ(short_function_name("std::vector<int, std::alloc"), "std::vector<…>");
  EXPECT_EQ(short_function_name("parse(std::__cxx11::basic_string<char"), "parse()");
  EXPECT_EQ(short_function_name(""), "");
}

}  // namespace
}  // namespace memloupe::report
