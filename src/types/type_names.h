// Reading demangled C++ function names for the parts the type rules need:
// the function's qualified name without return type and parameters, its
// components, and whether it is a constructor. Only the demangler's own output is
// parsed ("ns::C<int, std::pair<long, char> >::f(unsigned long) const",
// "std::_MakeUniq<T>::__single_object std::make_unique<T>()"), never source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memloupe::types {

// "R ns::C<A>::f(P) const" -> "ns::C<A>::f" (return type and parameters
// dropped; "(anonymous namespace)" kept as a component).
std::string_view qualified_name(std::string_view function);

// "ns::C<A, B>::f" -> {"ns", "C<A, B>", "f"} (split at top-level "::").
std::vector<std::string_view> components(std::string_view qualified);

// "C<A, B>" -> "C".
std::string_view base_name(std::string_view component);

// The class of a constructor's name ("ns::C<int>::C(int)" -> "ns::C<int>"),
// or "" when the function is not a constructor.
std::string_view constructor_class(std::string_view function);

// g++ prints "std::pair<int const, X>" and "A<B<C> >"; clang alike. Names are
// stored as the demangler wrote them, with only the space before a closing
// '>' removed ("A<B<C>>"), so both compilers give one name per type.
std::string tidy_type_name(std::string_view name);

}  // namespace memloupe::types
