#include "recorder/lifecycle.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>

#include "recorder/exec_follow.h"
#include "recorder/flush_thread.h"
#include "recorder/map_hooks.h"
#include "recorder/module_walk_gate.h"
#include "recorder/recorder.h"
#include "recorder/session.h"
#include "recorder/snapshot/snapshot.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder {
namespace {

std::atomic<bool> g_handlers_installed{false};

void on_exit_handler() {
  HooksParked parked(t_state);
  snapshot::snapshot_at_exit();
  end_session(format::EndReason::Exit);
}

void on_fork_prepare() { close_module_walks_for_fork(); }

void on_fork_parent() { open_module_walks_after_fork(/*in_child=*/false); }

void on_fork_child() {
  open_module_walks_after_fork(/*in_child=*/true);
  if (restart_in_fork_child(t_state)) start_flush_thread();
}

__attribute__((constructor)) void on_library_load() {
  HooksParked parked(t_state);
  ensure_process_init();
  const State s = state();
  if (s == State::Uninit || s == State::Off) return;
  // The unwinder's fallback is dlopen'ed here, where that is safe (not inside
  // malloc or a signal handler; our hooks are parked for its allocations). Stacks
  // sampled before this point that need it are recorded as far as the fast
  // unwinder gets.
  unwind_load_fallback();
  note_allocator_module();
  // Which exec'd images record: exec_follow.h.
  prepare_environment_for_exec(config(), g_session.pid);
  install_process_handlers();
  snapshot::init_snapshots();
  if (tracking()) start_flush_thread();
}

}  // namespace

void install_process_handlers() noexcept {
  if (g_handlers_installed.exchange(true, std::memory_order_acq_rel)) return;
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
  std::atexit(on_exit_handler);
}

}  // namespace memloupe::recorder
