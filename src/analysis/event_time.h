// The time of an event, and the guard that keeps a stream's times in order.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>

#include "format/events.h"

namespace memloupe::analysis {

// SymbolDef carries no time.
inline std::optional<uint64_t> event_time(const format::Event& e) {
  return std::visit(
      [](const auto& ev) -> std::optional<uint64_t> {
        if constexpr (requires { ev.time_ns; }) {
          return ev.time_ns;
        } else {
          return std::nullopt;
        }
      },
      e);
}

// Events come in time order (one encoder serialises them and clamps), but a
// trace from elsewhere (a CTF import, a hand-made test) may step back a little.
// Both passes clamp identically, so they agree on every time they compute.
class MonotoneClock {
 public:
  uint64_t operator()(uint64_t t) {
    if (t < last_) {
      ++inversions_;
      return last_;
    }
    return last_ = t;
  }
  uint64_t last() const { return last_; }
  uint64_t inversions() const { return inversions_; }

 private:
  uint64_t last_ = 0;
  uint64_t inversions_ = 0;
};

}  // namespace memloupe::analysis
