// The module map in the trace: a ModuleLoad (path, build-id, load bias, address
// range) for every loaded object, and a ModuleUnload when one goes away, so
// backtraces can be symbolised after the process is gone.
//
// Changes are detected from dl_iterate_phdr's load/unload counters (dlpi_adds,
// dlpi_subs), which also catch objects glibc loads internally (NSS, iconv) that a
// dlopen hook would miss. sync_modules() is called before every unwind on the
// sampled path and by the flush thread; when nothing changed it costs one
// dl_iterate_phdr callback (~50 ns).
//
// Locking: dl_iterate_phdr takes glibc's loader lock, and a thread holding that
// lock may call malloc. So it is never called with the trace lock held, and the
// module lock is only ever try-locked: a thread that finds a rescan in progress
// skips it instead of waiting (no lock-order cycle with the loader).
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/session.h"

namespace memloupe::recorder {

// Rescans if objects were loaded or unloaded since the last scan (or if `force`),
// writes the differences to the trace and tells the unwinder. Returns whether
// anything changed.
bool sync_modules(bool force = false) noexcept;

// Before a sampled allocation is unwound: sync_modules() in sampled mode (samples
// are rare, and the map stays exact), at most once per millisecond of trace time
// in --all mode, where every call is "sampled" and the check (~150 ns) would add
// 15% to each. There, a module loaded in between appears in the trace up to 1 ms
// after its first addresses do (the symboliser allows for that), and a library
// unloaded and another loaded at the same address within 1 ms is missed.
// `stamp`: the call's trace_stamp() (session.h). The test inline: out of line it
// cost ~17 instructions a call in --all mode (its register saves came first).
namespace modules_detail {
extern constinit std::atomic<uint64_t> g_next_check;  // --all mode: the stamp the next check is due at
// Whether a call at `stamp` comes before the check due at `due`. Stamps of one
// kind compare (ticks or ns); a change of kind is due at once.
inline bool before(uint64_t stamp, uint64_t due) noexcept {
  return ((stamp ^ due) & TraceClock::kTicks) == 0 && stamp < due;
}
void sync_modules_due(uint64_t stamp) noexcept;
}  // namespace modules_detail
[[gnu::always_inline]] inline void sync_modules_if_due(uint64_t stamp) noexcept {
  if (config().mode != format::Mode::Sampled &&
      modules_detail::before(stamp, modules_detail::g_next_check.load(std::memory_order_relaxed))) [[likely]]
    return;
  modules_detail::sync_modules_due(stamp);
}

// Called after a rescan that found objects loaded or unloaded, outside the
// module and trace locks (attach mode redirects the GOT entries of new modules
// here: attach_entry.cc). One function; null to stop.
void on_modules_changed(void (*callback)() noexcept) noexcept;

// A new trace (start, fork child) knows no modules yet.
void forget_modules() noexcept;

// The executable's path (readlink /proc/self/exe), read once.
const char* executable_path() noexcept;

// The address range of the recorder's own code (its hooks' frames, which
// backtraces leave out), found on the first call.
struct CodeRange {
  uint64_t lo, hi;
  bool contains(uint64_t address) const noexcept { return address >= lo && address < hi; }
};
CodeRange own_code_range() noexcept;

// The range of the loaded object holding `address` ({0, 0}: none). Calls
// dl_iterate_phdr: not from inside an allocation hook (see Locking above).
CodeRange module_range_of(uint64_t address) noexcept;

// Whether `address` lies in the recorder's own code.
inline bool is_own_code(uint64_t address) noexcept { return own_code_range().contains(address); }

}  // namespace memloupe::recorder
