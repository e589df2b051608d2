#include "recorder/recorder.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>

#include "recorder/event_path.h"
#include "recorder/exec_follow.h"
#include "recorder/modules.h"
#include "recorder/real_funcs.h"
#include "recorder/sys.h"
#include "recorder/thread_exit.h"

namespace memloupe::recorder {

using detail::g_alive_page;
using detail::g_alive_wipes;
using detail::g_config;

namespace {

constinit SpinLock g_init_lock;
// The threads' counters when this session started: a later attach's trace
// counts calls from its own start (the counters of a process that keeps
// running are never reset: their writers are the threads themselves, without
// atomics). Zero for a session started with the process or in a fork child.
constinit format::CallTotals g_totals_base{};
std::atomic<uint32_t> g_next_thread_id{0};
std::atomic<uint64_t> g_threads_seeded{0};

void init_alive_page() noexcept {
  if (g_alive_page == nullptr) {
    Mapping page = Mapping::anonymous(4096);
    if (!page) return;
    g_alive_wipes = sys_call(SYS_madvise, reinterpret_cast<long>(page.data()), 4096, MADV_WIPEONFORK) == 0;
    g_alive_page = static_cast<volatile uint8_t*>(page.data());
    page.abandon();  // read by every slow path until the process ends
    // The lean gate is only as safe as the wipe (session.h).
    if (g_alive_wipes)
      detail::g_lean_gate.store(
          reinterpret_cast<const uint32_t*>(const_cast<uint8_t*>(g_alive_page) + detail::kLeanGateOffset),
          std::memory_order_release);
  }
  *g_alive_page = 1;
}

bool ring_mode() noexcept { return g_config.mode == format::Mode::All && g_session.staging.active(); }

void on_output_failure() noexcept { set_state(State::Ended); }

// The file header's strings, read once into static buffers.
struct HeaderText {
  char argv[8192];
  size_t argv_length;
  utsname uts;
};
constinit HeaderText g_header_text{};

bool write_file_header() noexcept {
  HeaderText& h = g_header_text;
  h.argv_length = read_file("/proc/self/cmdline", h.argv, sizeof(h.argv));
  ::uname(&h.uts);
  format::HeaderFields f;
  f.mode = g_config.mode;
  f.addresses = g_config.addresses;
  f.time_unit_us = g_config.time_unit();
  f.bytes_per_sample = g_config.mode == format::Mode::Sampled ? g_config.every : 0;
  f.pid = g_session.pid;
  f.start_wall_ns = realtime_ns();
  f.start_mono_ns = g_session.start_mono_ns;
  f.host = h.uts.nodename;
  f.executable = executable_path();
  f.argv_nul_separated = {h.argv, h.argv_length};
  static uint8_t buf[format::kMaxFileHeader];
  const size_t n = format::encode_file_header(f, buf);
  if (n == 0) return false;
  g_session.output.write_chunk({buf, n});
  // On disk now, not at the first flush: a program killed in its first second
  // (SIGKILL, a fatal signal) still leaves a valid, if eventless, trace.
  g_session.output.drain();
  return true;
}

// Opens the file and writes the header and the module map; the caller holds no
// lock and its hooks are parked.
void start_session() noexcept {
  set_sampling_mean(g_config.every);
  g_session.pid = static_cast<uint32_t>(::getpid());
  g_session.clock.start();
  g_session.start_mono_ns = g_session.clock.now_ns();
  char path[Config::kMaxPath];
  if (!expand_output_path(g_config.output, g_session.pid, path, sizeof(path))) {
    (LogLine() << "cannot write trace '" << g_config.output << "': path too long; recording disabled")
        .emit();
    set_state(State::Ended);
    return;
  }
  const bool never_overwrite = image_role(g_config, g_session.pid) != ImageRole::First;
  if (!g_session.output.open(path, never_overwrite, on_output_failure, g_config.zstd_level,
                             g_config.mode == format::Mode::All)) {
    set_state(State::Ended);
    return;
  }
  // A new encoder: the first session's is as constant-initialised (its 0.5 MB of
  // tables are zero without being written), a fork child's was reset.
  // Column chunks, as the finaliser's compaction would make them (docs/FORMAT.md §5.8).
  g_session.raw_encoder().start(
      g_session.output, g_config.mode,
      {.addresses = g_config.addresses, .columns = true, .time_unit_us = g_config.time_unit()});
  // Without the ring (no memory for it), --all mode encodes under the lock.
  if (g_config.mode == format::Mode::All) (void)g_session.staging.init();
  write_file_header();
  init_alive_page();
  // Every bit of the lean gate, which a fork child finds wiped; the state's in
  // set_state below.
  sync_lean_bit(kLeanRing, ring_mode);
  sync_lean_callback_bit();
  set_state(g_config.start_paused ? State::Paused : State::Recording);
  forget_modules();
  sync_modules(/*force=*/true);
}

}  // namespace

void ensure_process_init() noexcept {
  if (state() != State::Uninit) return;
  LockGuard once(g_init_lock);
  if (state() != State::Uninit) return;
  resolve_real_funcs();
  g_config = read_config([](const char* name) -> const char* { return ::getenv(name); });
  create_thread_exit_key();
  set_backtrace_depth(g_config.depth);
  if (!g_config.enabled() ||
      image_role(g_config, static_cast<uint32_t>(::getpid())) == ImageRole::Untraced) {
    set_state(State::Off);
    return;
  }
  start_session();
}

bool start_session_late(EnvLookup lookup) noexcept {
  LockGuard once(g_init_lock);
  const State before = state();
  if (before == State::Recording || before == State::Paused) return false;
  resolve_real_funcs();
  create_thread_exit_key();
  g_config = read_config(lookup);
  if (!g_config.enabled()) return false;
  if (before == State::Ended) {
    // An earlier attach's session: this trace starts from nothing, like a fork
    // child's, but the threads are the same ones.
    g_session.table.clear();
    g_filter.clear();
    g_session.raw_encoder().reset();
  }
  // Calls racing this line may land on either side of it.
  g_totals_base = format::CallTotals{};
  g_threads.sum(g_totals_base);
  start_session();
  if (!tracking()) return false;
  // Threads registered in an earlier session make no first call again: their
  // ThreadStart goes into this trace now, under the ids they keep.
  const uint64_t now = trace_now_ns();
  LockGuard g(g_session.lock);
  g_threads.for_each_claimed([&](ThreadSlot& slot) {
    if (!slot.announced) return;
    trace_encoder().thread_start(format::ThreadId{slot.thread_id}, now, slot.os_tid);
    char name[32];
    const size_t len = read_thread_name(slot.os_tid, name, sizeof(name));
    if (len > 0) trace_encoder().thread_name(format::ThreadId{slot.thread_id}, now, {name, len});
  });
  return true;
}

Gap gap_for_next_call(ThreadState& t) noexcept {
  switch (state()) {
    case State::Recording:
    case State::Paused:
      if (g_config.mode == format::Mode::All) return {kParked, 0};
      t.gap_mean = sampling_mean();
      return next_gap(t.rng, static_cast<double>(t.gap_mean));
    default:
      return {kNever, 0};
  }
}

void activate_thread(ThreadState& t) noexcept {
  ensure_process_init();
  const uint32_t tid = current_tid();
  ThreadSlot* slot = g_threads.claim(static_cast<uintptr_t>(::pthread_self()), tid);
  t.slot = slot ? slot : &g_unregistered_slot;
  t.exit_rounds = 0;
  const uint64_t index = g_threads_seeded.fetch_add(1, std::memory_order_relaxed);
  t.rng.state = g_config.seed ? mix64(*g_config.seed + index)
                              : mix64(realtime_ns() ^ (uint64_t{tid} << 32) ^
                                      reinterpret_cast<uintptr_t>(&t));
  if (slot) watch_thread_exit(slot);
  if (slot && tracking()) {
    char name[32];
    const size_t len = read_thread_name(tid, name, sizeof(name));
    const uint64_t now = trace_now_ns();
    LockGuard g(g_session.lock);
    if (tracking()) {
      slot->thread_id = g_next_thread_id.fetch_add(1, std::memory_order_relaxed);
      slot->announced = true;
      const format::ThreadId id{slot->thread_id};
      trace_encoder().thread_start(id, now, tid);
      if (len > 0) trace_encoder().thread_name(id, now, {name, len});
    }
  }
  t.set_gap(gap_for_next_call(t));
  t.phase = Phase::Active;
}

void write_call_totals() noexcept {
  format::CallTotals totals{};
  g_threads.sum(totals);
  for (unsigned f = 0; f < format::kFuncCount; ++f) {
    totals.totals[f].calls -= g_totals_base.totals[f].calls;
    totals.totals[f].bytes -= g_totals_base.totals[f].bytes;
  }
  totals.time_ns = trace_now_ns();
  trace_encoder().call_totals(totals);
}

void end_session(format::EndReason reason, bool wait_for_lock) noexcept {
  if (!tracking()) return;
  if (wait_for_lock) {
    sync_modules();  // the last dlclose may not have been seen yet
    g_session.lock.lock();
  } else if (!spin_then_yield([] { return g_session.lock.try_lock(); }, kSettleNs)) {
    // Held by the thread a signal interrupted (waiting would never end) or, far
    // more often, by the flush thread encoding staged records (milliseconds).
    return;
  }
  const bool ours = tracking();  // another thread may have ended it meanwhile
  if (ours) {
    // A last RSS sample, so the RSS curve reaches the end of the run (the flush
    // thread's samples are 50 ms apart and the last can be long before exit).
    if (const uint64_t rss = resident_bytes(); rss != 0) trace_encoder().rss(trace_now_ns(), rss);
    write_call_totals();
    trace_encoder().trace_end(trace_now_ns(), reason);
    trace_encoder().flush();
    set_state(State::Ended);
  }
  g_session.lock.unlock();
  if (ours) g_session.output.close();
}

bool restart_in_fork_child(ThreadState& t) noexcept {
  // Locks held by the parent's other threads at the fork are held by no one now
  // (a realloc lock left held would make every allocation of the child wait).
  g_session.lock.reset();
  g_session.realloc_lock.reset();
  g_init_lock.reset();
  g_session.output.abandon_in_child();
  const State s = state();
  if (s != State::Recording && s != State::Paused) return false;
  if (!g_config.follow_fork) {
    set_state(State::Ended);
    return false;
  }
  const Phase phase = t.phase;
  t.phase = Phase::InHook;
  g_session.table.clear();
  g_filter.clear();
  g_session.raw_encoder().reset();
  g_threads.reset_for_child();
  g_totals_base = format::CallTotals{};
  g_next_thread_id.store(0, std::memory_order_relaxed);
  start_session();
  // The thread registers again, in the child's trace, on its next call.
  t.slot = &g_unregistered_slot;
  t.countdown = kParked;
  t.phase = phase == Phase::InHook ? Phase::InHook : Phase::Fresh;
  return tracking();
}

namespace {

// An events chunk is sealed once it is this old (trace time) and holds this
// many bytes of events, besides when a stream fills (~1.35 MB of columns) and
// at each flush period: a follower (`memloupe run`) reads only sealed chunks,
// so what it decodes after the program's exit is at most a chunk's age of a
// busy run (it was up to a whole chunk, ~55-100 ms of (b)'s or sqlite3's). The
// chunks are pieces of one zstd stream (chunk_compressor.h), so a cut costs
// only a few hundred bytes (the next block's entropy tables); the floor bounds
// that to ~2% of the events' bytes on the most compressible (sqlite3's, 33x),
// however slowly a loaded machine or a quiet program fills a chunk.
// docs/RECORDER.md, "A chunk every 40 ms, one zstd stream". Since
// 2026-11-26 (round 2) every 20 ms once a chunk holds 384 KiB: the events
// the follower has left after the exit are fewer, and sqlite3's bytes do not
// move at that floor (they grew 7% at 256 KiB; "The follower's tail at the
// exit" there). Since the seventh round every 12 ms once it holds 384 KiB:
// the last chunk, read after the exit, is ~30-40% smaller on busy runs ((a)
// filled 20 ms chunks of ~850 KB on a quiet machine, ~500 KB now; (b)'s are
// cut by the floor, ~400 KB, where 20 ms made ~570 KB). A cut more costs ~3.5
// KB on (a) and ~1.5 KB on (b): 5 ms (the floor alone) made (a)'s files
// 1.3-1.6% larger, 12 ms ~1% by the chunks' count; sqlite3, which fills 384
// KiB slower than 20 ms, is cut as before ("After the exit, 2026-11-26
// (seventh round)").
constexpr uint64_t kSealAgeNs = 12'000'000;
constexpr size_t kSealBytes = 384 * 1024;

bool chunk_due(const format::Encoder& e) noexcept {
  return e.open_bytes() >= kSealBytes && trace_now_ns() - e.open_since_ns() >= kSealAgeNs;
}

}  // namespace

void periodic_flush(bool flush_due, bool rss_due) noexcept {
  if (!tracking()) return;
  if (g_session.staging.active()) {
    LockGuard g(g_session.lock);
    drain_staged(0);
  }
  if (rss_due) {
    g_session.clock.calibrate();
    // The output's default zstd level follows the program's threads.
    size_t threads = 0;
    g_threads.for_each_claimed([&](ThreadSlot&) { ++threads; });
    g_session.output.set_program_threads(threads);
  }
  const uint64_t rss = rss_due ? resident_bytes() : 0;
  {
    LockGuard g(g_session.lock);
    // Ended meanwhile: the session's end wrote the last chunk and closed the output.
    if (!tracking()) return;
    if (rss != 0) trace_encoder().rss(trace_now_ns(), rss);
    if (flush_due) {
      write_call_totals();
      trace_encoder().flush();
    } else if (chunk_due(trace_encoder())) {
      trace_encoder().flush();
    }
  }
  g_session.output.drain();
}

}  // namespace memloupe::recorder
