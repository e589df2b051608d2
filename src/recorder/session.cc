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

bool pid_is_session_owner() noexcept {
  return static_cast<uint32_t>(::getpid()) == g_session.pid;
}
}  // namespace detail
constinit Session& g_session = g_session_storage.value;
constinit SampleFilter g_filter;
constinit ThreadRegistry g_threads;

bool set_paused(bool paused) noexcept {
  State expected = paused ? State::Recording : State::Paused;
  const State wanted = paused ? State::Paused : State::Recording;
  return detail::g_state.compare_exchange_strong(expected, wanted, std::memory_order_acq_rel) ||
         expected == wanted;
}

}  // namespace memloupe::recorder
