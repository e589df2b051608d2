#include "recorder/session.h"

#include <unistd.h>

namespace memloupe::recorder {

namespace {
constinit NoDestructor<Session> g_session_storage;
}  // namespace
namespace detail {
constinit std::atomic<State> g_state{State::Uninit};
constinit Config g_config;
constinit volatile uint8_t* g_alive_page = nullptr;
constinit bool g_alive_wipes = false;
constinit std::atomic<uint32_t> g_depth{kDefaultDepth};
constinit std::atomic<uint64_t> g_every{kDefaultEvery};
namespace {
constinit const uint32_t g_gate_shut = 0;
}  // namespace
constinit std::atomic<const uint32_t*> g_lean_gate{&g_gate_shut};

bool pid_is_session_owner() noexcept {
  return static_cast<uint32_t>(::getpid()) == g_session.pid;
}
}  // namespace detail
constinit Session& g_session = g_session_storage.value;
constinit SampleFilter g_filter;
constinit ThreadRegistry g_threads;

namespace {
bool recording_now() noexcept { return detail::g_state.load(std::memory_order_seq_cst) == State::Recording; }
}  // namespace

void sync_lean_bit(uint32_t bit, bool (*holds)() noexcept) noexcept {
  if (detail::g_alive_page == nullptr) return;  // no session yet: its start syncs every bit
  auto* const gate = const_cast<uint32_t*>(
      reinterpret_cast<volatile uint32_t*>(detail::g_alive_page + detail::kLeanGateOffset));
  for (bool now = holds();;) {
    if (now) __atomic_fetch_or(gate, bit, __ATOMIC_SEQ_CST);
    else __atomic_fetch_and(gate, ~bit, __ATOMIC_SEQ_CST);
    const bool again = holds();
    if (again == now) return;
    now = again;
  }
}

void set_state(State s) noexcept {
  detail::g_state.store(s, std::memory_order_seq_cst);
  sync_lean_bit(kLeanRecording, recording_now);
}

bool set_paused(bool paused) noexcept {
  State expected = paused ? State::Recording : State::Paused;
  const State wanted = paused ? State::Paused : State::Recording;
  const bool changed = detail::g_state.compare_exchange_strong(expected, wanted, std::memory_order_seq_cst);
  if (changed) sync_lean_bit(kLeanRecording, recording_now);
  return changed || expected == wanted;
}

}  // namespace memloupe::recorder
