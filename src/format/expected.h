// A value or an error: the libraries' way of reporting failure (std::expected is
// C++23; this is the small part of it we need).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace memloupe {

// What went wrong, and where in the input (byte offset; kNoOffset when the error
// is not about a position, e.g. a missing file).
struct Error {
  static constexpr uint64_t kNoOffset = ~uint64_t{0};
  std::string message;
  uint64_t offset = kNoOffset;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  T& operator*() { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace memloupe
