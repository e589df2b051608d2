// The public C API (include/memloupe/memloupe.h); the callbacks it installs
// are kept by callbacks.cc.
#define MEMLOUPE_API __attribute__((visibility("default")))
#include "memloupe/memloupe.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>

#include "recorder/callbacks.h"
#include "recorder/event_path.h"
#include "recorder/modules.h"
#include "recorder/record.h"
#include "recorder/recorder.h"
#include "recorder/session.h"
#include "recorder/snapshot/snapshot.h"

namespace memloupe::recorder {
namespace {

// Runs an API call with the thread registered and its hooks parked.
template <class F>
int with_thread(F f) noexcept {
  ThreadSlot* slot = current_thread_slot();
  HooksParked parked(t_state);
  if (!tracking()) return -1;
  return f(*slot);
}

// The thread a change event names: the caller, or 0 when it is not in the trace
// (no registry slot). The change is recorded either way: the analysis needs it.
memloupe::format::ThreadId trace_thread(const ThreadSlot& slot) noexcept {
  return memloupe::format::ThreadId{slot.announced ? slot.thread_id : 0};
}

int install_callbacks(const CallbackSet& c, void* user) noexcept {
  return with_thread([&](ThreadSlot&) {
    set_callbacks(c, user);
    return 0;
  });
}

}  // namespace

}  // namespace memloupe::recorder

using namespace memloupe::recorder;

extern "C" {

int memloupe_start(void) {
  return with_thread([](ThreadSlot&) { return set_paused(false) ? 0 : -1; });
}

int memloupe_stop(void) {
  return with_thread([](ThreadSlot&) { return set_paused(true) ? 0 : -1; });
}

void memloupe_marker(const char* name) {
  with_thread([name](ThreadSlot& slot) {
    const uint64_t now = trace_now_ns();
    const std::string_view text = name ? std::string_view(name, strnlen(name, 4096)) : "";
    LockGuard g(g_session.lock);
    if (!tracking() || !slot.announced) return -1;
    trace_encoder().marker(memloupe::format::ThreadId{slot.thread_id}, now, text);
    return 0;
  });
}

int memloupe_flush(void) {
  return with_thread([](ThreadSlot&) {
    sync_modules();
    periodic_flush(/*flush_due=*/true, /*rss_due=*/false);
    return 0;
  });
}

// noinline: the caller's registers are read before any code of ours runs.
__attribute__((noinline)) int memloupe_snapshot(const char* label) {
  snapshot::CallerRegs regs;
  MEMLOUPE_CAPTURE_CALLER_REGS(regs);
  return with_thread([&](ThreadSlot&) { return snapshot::take_snapshot(label, false, &regs); });
}

int memloupe_set_callbacks(memloupe_alloc_callback on_alloc, memloupe_free_callback on_free,
                           void* user) {
  return install_callbacks({on_alloc, on_free, nullptr, nullptr}, user);
}

int memloupe_set_trackers(memloupe_track_callback on_track, memloupe_untrack_callback on_untrack,
                          void* user) {
  return install_callbacks({nullptr, nullptr, on_track, on_untrack}, user);
}

int memloupe_set_depth(unsigned depth) {
  if (depth > memloupe::format::kMaxFrames) return -1;
  return with_thread([=](ThreadSlot& slot) {
    const uint64_t now = trace_now_ns();
    LockGuard g(g_session.lock);
    if (!tracking()) return -1;
    set_backtrace_depth(depth);
    trace_encoder().depth_change(trace_thread(slot), now, depth);
    return 0;
  });
}

int memloupe_set_rate(double rate) {
  // The mean gap in bytes, as `memloupe run --rate` rounds it.
  if (!(rate > 0 && rate <= 1)) return -1;
  const double mean = std::nearbyint(1 / rate);
  if (mean > static_cast<double>(memloupe::format::kMaxChangedRate)) return -1;
  const auto every = static_cast<uint64_t>(mean);
  const int result = with_thread([=](ThreadSlot& slot) {
    if (config().mode != memloupe::format::Mode::Sampled) return -1;
    const uint64_t now = trace_now_ns();
    LockGuard g(g_session.lock);
    if (!tracking()) return -1;
    // Under the trace lock: an allocation recorded after this event was
    // decided at the new mean, give or take one racing the change.
    set_sampling_mean(every);
    trace_encoder().rate_change(trace_thread(slot), now, every);
    return 0;
  });
  // This thread's next sample point from here, at the new mean (with_thread
  // put the old gap back). Other threads switch at their next sample point.
  if (result == 0 && t_state.phase == Phase::Active) t_state.set_gap(gap_for_next_call(t_state));
  return result;
}

}  // extern "C"
