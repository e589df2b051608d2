#include "recorder/snapshot/snapshot.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstring>

#include "format/snapshot_writer.h"
#include "recorder/event_path.h"
#include "recorder/flush_thread.h"
#include "recorder/modules.h"
#include "recorder/real_funcs.h"
#include "recorder/record.h"
#include "recorder/session.h"
#include "recorder/snapshot/heap_scan.h"
#include "recorder/snapshot/stack_frames.h"
#include "recorder/snapshot/world_stop.h"
#include "recorder/sys.h"
#include "recorder/unwind/stack_bounds.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder::snapshot {
namespace {

using format::SnapshotRoot;
using format::SnapshotRootRecord;

// Threads that do not answer the stop signal within this are left running (and
// their stacks unscanned): they block it.
constexpr uint64_t kStopTimeoutNs = 2'000'000'000;
constexpr size_t kMaxRoots = 1 << 16;
constexpr size_t kMaxFramesPerThread = 1024;
constexpr size_t kMaxSegments = 4096;
constexpr size_t kMaxTlsModules = 256;
// x86-64 SysV: a leaf function may keep data this far below its stack pointer.
constexpr uintptr_t kRedZone = 128;

struct RootEntry {
  SnapshotRootRecord rec;
  const uint64_t* words = nullptr;  // registers: scan these instead of memory
};

struct TlsModule {
  uintptr_t below_tp = 0;  // the block starts this far below the thread pointer
  uint64_t size = 0;
  uint64_t module_start = 0;
};

struct Scratch {
  Mapping roots_map, frames_map, segments_map, chunk_map, blocks_map;
  RootEntry* roots = nullptr;
  size_t n_roots = 0;
  StackFrame* frames = nullptr;
  TlsModule tls[kMaxTlsModules];
  size_t n_tls = 0;
  struct Segment {
    uintptr_t begin, end;
  };
  Segment* segments = nullptr;
  size_t n_segments = 0;
  Segment* relro = nullptr;
  size_t n_relro = 0;
  bool ok() const { return roots && frames && segments && chunk_map; }
};

struct Request {
  const char* label;
  bool at_exit;
  const CallerRegs* caller;
  int result = -1;
};

constinit std::atomic<bool> g_busy{false};
constinit std::atomic<uint32_t> g_number{0};
constinit std::atomic<bool> g_warned_mode{false};
// glibc's static TLS size (ld.so's _dl_get_tls_static_info) and the size of its
// thread descriptor (libc's _thread_db_sizeof_pthread, which libthread_db reads),
// read at start-up.
constinit size_t g_static_tls = 0;
constinit size_t g_descriptor = 0;

void add_root(Scratch& s, const SnapshotRootRecord& rec, const uint64_t* words = nullptr) {
  if (s.n_roots < kMaxRoots) s.roots[s.n_roots++] = {rec, words};
}

// --- Modules: writable segments and static TLS (run under the loader lock) -----

int collect_module(dl_phdr_info* info, size_t, void* data) {
  Scratch& s = *static_cast<Scratch*>(data);
  const CodeRange own = own_code_range();
  uint64_t first = 0;
  bool is_own = false;
  for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (first == 0) first = begin;
    if (own.lo >= begin && own.lo < begin + ph.p_memsz) is_own = true;
  }
  // The recorder's own data (its encoder's history of recent addresses, its
  // thread state) would make every block it mentions look reachable.
  if (is_own) return 0;
  for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && ph.p_memsz != 0 && s.n_segments < kMaxSegments) {
      s.segments[s.n_segments++] = {begin, begin + ph.p_memsz};
    } else if (ph.p_type == PT_GNU_RELRO && ph.p_memsz != 0 && s.n_relro < kMaxSegments) {
      s.relro[s.n_relro++] = {begin, begin + ph.p_memsz};
    } else if (ph.p_type == PT_TLS && ph.p_memsz != 0 && info->dlpi_tls_data != nullptr &&
               s.n_tls < kMaxTlsModules) {
      // Static TLS (x86-64: below the thread pointer, at the same offset in every
      // thread); a block elsewhere is dynamic TLS, which this does not cover.
      const uintptr_t tp = thread_pointer();
      const auto data_at = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
      if (data_at < tp && tp - data_at <= g_static_tls)
        s.tls[s.n_tls++] = {tp - data_at, ph.p_memsz, 0};
    }
  }
  for (size_t t = 0; t < s.n_tls; ++t)
    if (s.tls[t].module_start == 0) s.tls[t].module_start = first;
  return 0;
}

void add_global_roots(Scratch& s) {
  for (size_t i = 0; i < s.n_segments; ++i) {
    SnapshotRootRecord r;
    r.kind = SnapshotRoot::Global;
    r.address = s.segments[i].begin;
    r.size = s.segments[i].end - s.segments[i].begin;
    add_root(s, r);
  }
  // RELRO outside every writable segment (layouts that give it a segment of its own).
  for (size_t i = 0; i < s.n_relro; ++i) {
    bool inside = false;
    for (size_t j = 0; j < s.n_segments && !inside; ++j)
      inside = s.relro[i].begin >= s.segments[j].begin && s.relro[i].end <= s.segments[j].end;
    if (inside) continue;
    SnapshotRootRecord r;
    r.kind = SnapshotRoot::Global;
    r.address = s.relro[i].begin;
    r.size = s.relro[i].end - s.relro[i].begin;
    add_root(s, r);
  }
}

// --- Threads -------------------------------------------------------------------

uint32_t trace_thread_of(uint32_t tid) {
  const ThreadSlot* slot = g_threads.find_tid(tid);
  return slot != nullptr && slot->announced ? slot->thread_id + 1 : 0;
}

// One thread's stack frames, registers and static TLS blocks.
void add_thread_roots(Scratch& s, uint32_t tid, uintptr_t pc, uintptr_t sp, uintptr_t bp,
                      unwind_detail::Span stack, bool taker, const uint64_t* regs, size_t n_regs,
                      uintptr_t tp) {
  const uint32_t thread = trace_thread_of(tid);
  // glibc puts a thread's static TLS and its descriptor at the top of its stack
  // mapping: the stack ends below them (the TLS blocks are roots of their own).
  uintptr_t tls_low = tp;
  for (size_t t = 0; t < s.n_tls; ++t) tls_low = std::min(tls_low, tp - s.tls[t].below_tp);
  if (tls_low > stack.begin && tls_low < stack.end) stack.end = tls_low & ~uintptr_t{7};
  if (stack.end != 0) {
    const size_t n = split_stack(pc, sp, bp, stack.begin, stack.end, taker, s.frames, kMaxFramesPerThread);
    for (size_t f = 0; f < n; ++f) {
      uintptr_t begin = s.frames[f].begin;
      // The innermost frame of an interrupted thread: its red zone too.
      if (f == 0 && !taker) begin = begin - stack.begin >= kRedZone ? begin - kRedZone : stack.begin;
      add_root(s, {SnapshotRoot::Stack, thread, tid, begin, s.frames[f].end - begin, s.frames[f].pc});
    }
  }
  if (regs != nullptr && n_regs != 0)
    add_root(s, {SnapshotRoot::Register, thread, tid, 0, n_regs * 8, 0}, regs);
  for (size_t t = 0; t < s.n_tls; ++t)
    add_root(s, {SnapshotRoot::Tls, thread, tid, tp - s.tls[t].below_tp, s.tls[t].size, s.tls[t].module_start});
  // The thread descriptor (x86-64: at the thread pointer): its DTV pointer (the
  // dynamic TLS blocks hang off it) and pthread_setspecific's values.
  if (g_descriptor != 0 && tp != 0) add_root(s, {SnapshotRoot::Tls, thread, tid, tp, g_descriptor, 0});
}

// --- Blocks --------------------------------------------------------------------

// The live blocks of the address table, sorted. The extent scanned is the
// allocator's usable size (the requested size is not kept in the process; the
// loader puts it back from the Alloc events).
size_t collect_blocks(Scratch& s) {
  const size_t n = g_session.table.size();
  s.blocks_map = Mapping::anonymous((n + 1) * sizeof(LiveBlock));
  if (!s.blocks_map) return 0;
  auto* blocks = static_cast<LiveBlock*>(s.blocks_map.data());
  size_t k = 0;
  g_session.table.for_each([&](uint64_t address, uint64_t value) {
    // Mappings (mmap, the program break) are neither blocks nor roots here: the
    // table does not keep their size, and malloc_usable_size cannot be asked
    // (docs/RETENTION.md, "What a snapshot does not see").
    if (k == n || (value & kMappedBlock) != 0) return;
    size_t extent = g_real.malloc_usable_size != nullptr
                        ? g_real.malloc_usable_size(reinterpret_cast<void*>(address))
                        : 0;
    if (extent == 0) extent = 1;  // memcheck's rule for empty blocks
    blocks[k++] = {address, address + extent, value & kIdMask};
  });
  std::sort(blocks, blocks + k, [](const LiveBlock& a, const LiveBlock& b) { return a.address < b.address; });
  // Usable sizes may overlap a neighbour's start only if the allocator lies;
  // clip so that the array stays ordered and disjoint.
  for (size_t i = 0; i + 1 < k; ++i) blocks[i].end = std::min(blocks[i].end, blocks[i + 1].address);
  return k;
}

// --- The snapshot --------------------------------------------------------------

// A module's segment may have pages the program made unreadable (mprotect);
// those are skipped rather than fault. One probe for the whole range, page by
// page only when it fails.
void scan_readable(HeapScan& scan, uint32_t node, uintptr_t begin, uintptr_t end) {
  if (unwind_detail::pages_readable(begin, end)) {
    scan.scan_range(node, begin, end);
    return;
  }
  constexpr uintptr_t kPage = 4096;
  for (uintptr_t at = begin; at < end;) {
    const uintptr_t next = std::min(end, (at & ~(kPage - 1)) + kPage);
    if (unwind_detail::pages_readable(at, next)) scan.scan_range(node, at, next, begin);
    at = next;
  }
}

void write_snapshot(Scratch& s, const Request& req, const World& world, size_t n_blocks,
                    uint64_t now, uint64_t stopped_at) {
  const auto* blocks = static_cast<const LiveBlock*>(s.blocks_map.data());
  format::SnapshotWriter out(g_session.output, static_cast<uint8_t*>(s.chunk_map.data()),
                             g_number.fetch_add(1, std::memory_order_relaxed));
  format::SnapshotBegin b;
  b.time_ns = now;
  b.at_exit = req.at_exit;
  b.label = req.label ? std::string_view(req.label, strnlen(req.label, 4096)) : std::string_view();
  b.threads = static_cast<uint32_t>(world.count + 1);
  b.threads_not_stopped = static_cast<uint32_t>(world.count - world.stopped);
  out.begin(b);
  for (size_t r = 0; r < s.n_roots; ++r) out.root(s.roots[r].rec);
  for (size_t i = 0; i < n_blocks; ++i) out.block(blocks[i].address, blocks[i].end - blocks[i].address, blocks[i].alloc_id);
  HeapScan scan(blocks, n_blocks, static_cast<uint32_t>(s.n_roots), out);
  for (size_t r = 0; r < s.n_roots; ++r) {
    const RootEntry& e = s.roots[r];
    const auto node = static_cast<uint32_t>(r);
    if (e.words != nullptr) {
      scan.scan_words(node, e.words, e.rec.size / 8);
    } else if (e.rec.kind == SnapshotRoot::Stack) {
      scan.scan_range(node, e.rec.address, e.rec.address + e.rec.size);  // verified readable
    } else {
      scan_readable(scan, node, e.rec.address, e.rec.address + e.rec.size);
    }
  }
  for (size_t i = 0; i < n_blocks; ++i)
    scan.scan_range(static_cast<uint32_t>(s.n_roots + i), blocks[i].address, blocks[i].end);
  out.end(scan.bytes_scanned(), monotonic_ns() - stopped_at);
}

// Runs inside dl_iterate_phdr, holding the loader's lock: no thread can then be
// stopped while holding it, and the unwinder's module lookups (which take it
// again, recursively, on this thread) cannot wait for a stopped thread.
int run_locked(dl_phdr_info*, size_t, void* data) {
  Request& req = *static_cast<Request*>(data);
  Scratch s;
  s.roots_map = Mapping::anonymous(kMaxRoots * sizeof(RootEntry));
  s.frames_map = Mapping::anonymous(kMaxFramesPerThread * sizeof(StackFrame));
  s.segments_map = Mapping::anonymous(2 * kMaxSegments * sizeof(Scratch::Segment));
  s.chunk_map = Mapping::anonymous(format::SnapshotWriter::kBufferBytes);
  s.roots = static_cast<RootEntry*>(s.roots_map.data());
  s.frames = static_cast<StackFrame*>(s.frames_map.data());
  s.segments = static_cast<Scratch::Segment*>(s.segments_map.data());
  s.relro = s.segments ? s.segments + kMaxSegments : nullptr;
  if (!s.ok()) {
    (LogLine() << "no memory for a heap snapshot; none taken").emit();
    return 1;
  }
  dl_iterate_phdr(collect_module, &s);  // the lock is recursive
  add_global_roots(s);

  // The taker's own registers and stack, before anything is stopped.
  UnwindRegs here;
  MEMLOUPE_CAPTURE_REGS(here);
  const uint32_t self = current_tid();
  add_thread_roots(s, self, here.pc, here.sp, here.bp, unwind_detail::stack_span(here.sp), true,
                   req.caller ? req.caller->words : nullptr, req.caller ? 6 : 0, thread_pointer());

  LockGuard lock(g_session.lock);
  if (!tracking()) return 1;
  const uint64_t now = trace_now_ns();
  drain_staged(kSettleNs);
  const uint64_t stopped_at = monotonic_ns();
  World world = stop_world(flush_thread_tid(), kStopTimeoutNs);
  // Records staged by threads that were stopped after the drain above.
  drain_staged(0);
  for (size_t i = 0; i < world.count; ++i) {
    const StoppedThread& t = world.threads[i];
    if (t.stopped.load(std::memory_order_acquire) == 0) continue;
    add_thread_roots(s, t.tid, t.pc, t.sp, t.bp, {t.stack_begin, t.stack_end}, false, t.regs,
                     kGeneralRegisters, t.thread_pointer);
  }
  const size_t n_blocks = collect_blocks(s);
  // The events before the snapshot go first, so that the loader knows every
  // block's Alloc when it meets the snapshot.
  if (const ThreadSlot* slot = g_threads.find_tid(self); slot && slot->announced) {
    char text[96] = "snapshot: ";
    const size_t len = req.label ? strnlen(req.label, sizeof(text) - 11) : 0;
    std::memcpy(text + 10, req.label ? req.label : "", len);
    trace_encoder().marker(format::ThreadId{slot->thread_id}, now, {text, 10 + len});
  }
  trace_encoder().flush();
  write_snapshot(s, req, world, n_blocks, now, stopped_at);
  resume_world(world);
  req.result = 0;
  return 1;
}

// --- Signal-triggered snapshots --------------------------------------------------

constinit std::atomic<uint32_t> g_signal_requests{0};

void on_snapshot_signal(int) {
  g_signal_requests.fetch_add(1, std::memory_order_release);
  futex_wake(reinterpret_cast<const uint32_t*>(&g_signal_requests), 1);
}

// The thread that takes the snapshots a signal asks for: a handler cannot (it
// may have interrupted a thread holding the trace lock), nor can the flush
// thread (it has no TLS, and the loader's lock needs it).
void* signal_thread(void*) {
  current_thread_slot();  // registered, so its snapshots' markers have a thread
  HooksParked parked(t_state);
  uint32_t seen = 0;
  for (;;) {
    futex_wait(reinterpret_cast<const uint32_t*>(&g_signal_requests), seen);
    const uint32_t now = g_signal_requests.load(std::memory_order_acquire);
    if (now == seen) continue;
    seen = now;
    if (state() == State::Ended) return nullptr;
    take_snapshot("signal", false, nullptr);
  }
}

}  // namespace

int take_snapshot(const char* label, bool at_exit, const CallerRegs* caller) noexcept {
  if (!tracking()) return -1;
  if (config().mode != format::Mode::All) {
    if (!g_warned_mode.exchange(true))
      (LogLine() << "heap snapshots need --all (MEMLOUPE_MODE=all): a sampled trace knows too few "
                    "blocks to follow pointers through; no snapshot taken")
          .emit();
    return -1;
  }
  if (g_busy.exchange(true, std::memory_order_acquire)) return -1;
  sync_modules();  // frame pcs and globals must lie in modules the trace knows
  Request req{label, at_exit, caller};
  const int saved_errno = errno;  // the program's, whatever our probes do to it
  dl_iterate_phdr(run_locked, &req);
  errno = saved_errno;
  g_busy.store(false, std::memory_order_release);
  return req.result;
}

void init_snapshots() noexcept {
  using StaticInfo = void (*)(size_t*, size_t*);
  if (auto* get = reinterpret_cast<StaticInfo>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"))) {
    size_t size = 0, align = 0;
    get(&size, &align);
    g_static_tls = size;
  }
  if (const auto* size = static_cast<const unsigned*>(dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread")))
    g_descriptor = *size;
  const int sig = config().snapshot_signal;
  // Installed in sampled mode too: the snapshot is then refused with a message,
  // where the signal's default action would have ended the program.
  if (sig == 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_snapshot_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  // Every signal but the stop signal blocked: the user's signal goes to the
  // program's threads, whose handler only wakes this one.
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, stop_signal());
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&thread, &attr, signal_thread, nullptr) != 0)
    (LogLine() << "cannot start the snapshot thread; MEMLOUPE_SNAPSHOT_SIGNAL is ignored").emit();
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void snapshot_at_exit() noexcept {
  if (config().snapshot_at_exit && config().mode == format::Mode::All && tracking())
    take_snapshot("exit", true, nullptr);
}

}  // namespace memloupe::recorder::snapshot
