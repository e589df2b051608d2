// The public C API (include/memloupe/memloupe.h) and the callbacks behind it.
#define MEMLOUPE_API __attribute__((visibility("default")))
#include "memloupe/memloupe.h"

#include <atomic>
#include <cstring>

#include "recorder/callbacks.h"
#include "recorder/hook_paths.h"
#include "recorder/modules.h"
#include "recorder/recorder.h"
#include "recorder/snapshot/snapshot.h"

namespace memloupe::recorder {
namespace {

std::atomic<memloupe_alloc_callback> g_on_alloc{nullptr};
std::atomic<memloupe_free_callback> g_on_free{nullptr};
std::atomic<void*> g_user{nullptr};

// Runs an API call with the thread registered and its hooks parked.
template <class F>
int with_thread(F f) noexcept {
  ThreadSlot* slot = current_thread_slot();
  HooksParked parked(t_state);
  if (!tracking()) return -1;
  return f(*slot);
}

}  // namespace

bool has_alloc_callback() noexcept { return g_on_alloc.load(std::memory_order_acquire) != nullptr; }

bool notify_alloc(const SampledBlock& b) noexcept {
  const memloupe_alloc_callback cb = g_on_alloc.load(std::memory_order_acquire);
  if (cb == nullptr) return false;
  const memloupe_sample s{b.id,    b.n_samples,         format::func_name(b.func).data(),
                          b.size,  b.address,           b.backtrace.data(),
                          b.backtrace.size()};
  return cb(&s, g_user.load(std::memory_order_acquire)) != 0;
}

void notify_free(uint64_t id, void* address) noexcept {
  if (const memloupe_free_callback cb = g_on_free.load(std::memory_order_acquire))
    cb(id, address, g_user.load(std::memory_order_acquire));
}

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
    g_session.encoder().marker(memloupe::format::ThreadId{slot.thread_id}, now, text);
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
  return with_thread([=](ThreadSlot&) {
    g_user.store(user, std::memory_order_release);
    g_on_free.store(on_free, std::memory_order_release);
    g_on_alloc.store(on_alloc, std::memory_order_release);
    return 0;
  });
}

}  // extern "C"
