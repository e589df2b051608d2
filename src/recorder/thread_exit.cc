#include "recorder/thread_exit.h"

#include <limits.h>
#include <pthread.h>

#include <atomic>

#include "recorder/event_path.h"
#include "recorder/session.h"
#include "recorder/sys.h"

namespace memloupe::recorder {
namespace {

pthread_key_t g_exit_key;
std::atomic<bool> g_exit_key_ok{false};

// pthread runs key destructors in up to PTHREAD_DESTRUCTOR_ITERATIONS rounds while
// values are set. Re-arming until the last round lets allocations made by other
// keys' destructors (and C++ thread_local destructors, which run before all of
// them) still be recorded and counted.
void on_thread_exit(void* arg) {
  ThreadState& t = t_state;
  auto* slot = static_cast<ThreadSlot*>(arg);
  if (++t.exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
    pthread_setspecific(g_exit_key, slot);  // no allocation: registration made the slot
    return;
  }
  t.phase = Phase::InHook;
  t.countdown = kParked;
  if (slot->announced && tracking()) {
    // The name again: a thread may have renamed itself with prctl(PR_SET_NAME),
    // which no hook sees.
    char name[32];
    const size_t len = read_thread_name(slot->os_tid, name, sizeof(name));
    const uint64_t now = trace_now_ns();
    const format::ThreadId id{slot->thread_id};
    LockGuard g(g_session.lock);
    if (tracking()) {
      if (len > 0) trace_encoder().thread_name(id, now, {name, len});
      trace_encoder().thread_end(id, now);
    }
  }
  g_threads.release(slot);
  t.slot = &g_unregistered_slot;
  t.phase = Phase::Exited;
}

}  // namespace

void create_thread_exit_key() noexcept {
  if (!g_exit_key_ok.load(std::memory_order_acquire))
    g_exit_key_ok.store(pthread_key_create(&g_exit_key, on_thread_exit) == 0, std::memory_order_release);
}

void watch_thread_exit(ThreadSlot* slot) noexcept {
  if (g_exit_key_ok.load(std::memory_order_acquire)) pthread_setspecific(g_exit_key, slot);
}

}  // namespace memloupe::recorder
