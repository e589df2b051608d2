#include "recorder/modules.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "recorder/event_path.h"
#include "recorder/module_walk_gate.h"
#include "recorder/session.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder {
namespace {

constexpr size_t kMaxModules = 2048;
constexpr size_t kMaxBuildId = 64;

struct Scanned {
  uint64_t start, end, bias;
  uint64_t path_hash;
  uint32_t path_offset, path_length;
  uint8_t build_id[kMaxBuildId];
  uint8_t build_id_length;
};

// The last scan's results; reused by every scan, guarded by g_lock.
struct Scan {
  Scanned modules[kMaxModules];
  size_t count;
  char paths[256 * 1024];
  size_t paths_used;
};

struct Known {
  uint64_t start;
  uint64_t path_hash;
};

constinit SpinLock g_lock;
constinit Scan g_scan{};
constinit Known g_known[kMaxModules]{};
constinit size_t g_known_count = 0;
// dlpi_adds/dlpi_subs at the last complete scan; ~0 forces the next one.
std::atomic<uint64_t> g_seen_adds{~uint64_t{0}};
std::atomic<uint64_t> g_seen_subs{0};

char g_exe_path[4096];
std::atomic<bool> g_exe_path_read{false};

uint64_t fnv1a(const char* s, size_t n) noexcept {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3u;
  return h;
}

// Copies the GNU build-id note of a loaded object, if it has one.
uint8_t read_build_id(const dl_phdr_info* info, uint8_t* out) noexcept {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const size_t align = ph.p_align == 8 ? 8 : 4;
    auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    size_t left = ph.p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof(nh));
      const size_t name = (nh.n_namesz + align - 1) & ~(align - 1);
      const size_t desc = (nh.n_descsz + align - 1) & ~(align - 1);
      const size_t total = sizeof(nh) + name + desc;
      if (total > left || total < sizeof(nh)) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          std::memcmp(p + sizeof(nh), "GNU", 4) == 0 && nh.n_descsz <= kMaxBuildId) {
        std::memcpy(out, p + sizeof(nh) + name, nh.n_descsz);
        return static_cast<uint8_t>(nh.n_descsz);
      }
      p += total;
      left -= total;
    }
  }
  return 0;
}

int read_counters(dl_phdr_info* info, size_t, void* data) {
  auto* c = static_cast<uint64_t*>(data);
  c[0] = info->dlpi_adds;
  c[1] = info->dlpi_subs;
  return 1;  // the counters are global: the first object is enough
}

int scan_one(dl_phdr_info* info, size_t, void* data) {
  Scan& scan = *static_cast<Scan*>(data);
  if (scan.count == kMaxModules) return 1;
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uint64_t a = info->dlpi_addr + ph.p_vaddr;
    if (a < lo) lo = a;
    if (a + ph.p_memsz > hi) hi = a + ph.p_memsz;
  }
  if (hi == 0) return 0;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : executable_path();
  size_t len = std::strlen(path);
  if (len > 4095) len = 4095;
  if (len > sizeof(scan.paths) - scan.paths_used) return 1;
  Scanned& m = scan.modules[scan.count++];
  m.start = lo;
  m.end = hi;
  m.bias = info->dlpi_addr;
  m.path_offset = static_cast<uint32_t>(scan.paths_used);
  m.path_length = static_cast<uint32_t>(len);
  m.path_hash = fnv1a(path, len);
  std::memcpy(scan.paths + scan.paths_used, path, len);
  scan.paths_used += len;
  m.build_id_length = read_build_id(info, m.build_id);
  return 0;
}

bool known(uint64_t start, uint64_t path_hash) noexcept {
  for (size_t i = 0; i < g_known_count; ++i)
    if (g_known[i].start == start && g_known[i].path_hash == path_hash) return true;
  return false;
}

bool scanned(uint64_t start, uint64_t path_hash) noexcept {
  for (size_t i = 0; i < g_scan.count; ++i)
    if (g_scan.modules[i].start == start && g_scan.modules[i].path_hash == path_hash) return true;
  return false;
}

// Writes the differences between g_known and g_scan; under the trace lock.
bool emit_changes() noexcept {
  format::Encoder& enc = trace_encoder();
  const uint64_t now = trace_now_ns();
  bool changed = false;
  for (size_t i = 0; i < g_known_count; ++i) {
    if (scanned(g_known[i].start, g_known[i].path_hash)) continue;
    enc.module_unload(now, g_known[i].start);
    changed = true;
  }
  for (size_t i = 0; i < g_scan.count; ++i) {
    const Scanned& m = g_scan.modules[i];
    if (known(m.start, m.path_hash)) continue;
    format::ModuleLoad ev;
    ev.time_ns = now;
    ev.start = m.start;
    ev.end = m.end;
    ev.load_bias = m.bias;
    ev.path = {g_scan.paths + m.path_offset, m.path_length};
    ev.build_id = {m.build_id, m.build_id_length};
    enc.module_load(ev);
    changed = true;
  }
  return changed;
}

// The address range of this library's loadable segments, found once.
std::atomic<bool> g_own_range_known{false};
CodeRange g_own_range{0, 0};

struct RangeQuery {
  uint64_t address;
  CodeRange found;
};

int find_range(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<RangeQuery*>(data);
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (q->address < lo || q->address >= hi) return 0;
  q->found = {lo, hi};
  return 1;
}

}  // namespace

CodeRange module_range_of(uint64_t address) noexcept {
  RangeQuery q{address, {0, 0}};
  dl_iterate_phdr(find_range, &q);
  return q.found;
}

CodeRange own_code_range() noexcept {
  if (!g_own_range_known.load(std::memory_order_acquire)) [[unlikely]] {
    g_own_range = module_range_of(reinterpret_cast<uint64_t>(&find_range));
    g_own_range_known.store(true, std::memory_order_release);
  }
  return g_own_range;
}

const char* executable_path() noexcept {
  if (!g_exe_path_read.load(std::memory_order_acquire)) {
    const ssize_t n = ::readlink("/proc/self/exe", g_exe_path, sizeof(g_exe_path) - 1);
    g_exe_path[n > 0 ? n : 0] = '\0';
    g_exe_path_read.store(true, std::memory_order_release);
  }
  return g_exe_path;
}

namespace {
std::atomic<void (*)() noexcept> g_on_changed{nullptr};
}  // namespace

void on_modules_changed(void (*callback)() noexcept) noexcept {
  g_on_changed.store(callback, std::memory_order_release);
}

bool sync_modules(bool force) noexcept {
  if (!tracking()) return false;
  uint64_t counters[2] = {0, 0};
  if (!gated_module_walk(read_counters, counters)) return false;
  if (!force && counters[0] == g_seen_adds.load(std::memory_order_relaxed) &&
      counters[1] == g_seen_subs.load(std::memory_order_relaxed))
    return false;
  if (!g_lock.try_lock()) return false;  // someone else is rescanning
  g_scan.count = 0;
  g_scan.paths_used = 0;
  if (!gated_module_walk(scan_one, &g_scan)) {
    g_lock.unlock();
    return false;
  }
  bool changed;
  {
    LockGuard trace(g_session.lock);
    changed = tracking() && emit_changes();
  }
  g_known_count = g_scan.count;
  for (size_t i = 0; i < g_scan.count; ++i)
    g_known[i] = {g_scan.modules[i].start, g_scan.modules[i].path_hash};
  // The counters read before the scan: a change during it triggers another scan.
  g_seen_adds.store(counters[0], std::memory_order_relaxed);
  g_seen_subs.store(counters[1], std::memory_order_relaxed);
  g_lock.unlock();
  if (changed) {
    unwind_modules_changed();
    if (auto* callback = g_on_changed.load(std::memory_order_acquire)) callback();
  }
  return changed;
}

namespace modules_detail {
constinit std::atomic<uint64_t> g_next_check{0};

// sync_modules_if_due() once its test has passed (or in sampled mode).
void sync_modules_due(uint64_t stamp) noexcept {
  if (config().mode == format::Mode::Sampled) {
    sync_modules();
    return;
  }
  constexpr uint64_t kPeriodNs = 1'000'000;
  uint64_t due = g_next_check.load(std::memory_order_relaxed);
  if (before(stamp, due)) return;  // another thread took it since the inline test
  const uint64_t period = stamp & TraceClock::kTicks ? g_session.clock.ticks_in(kPeriodNs) : kPeriodNs;
  if (!g_next_check.compare_exchange_strong(due, stamp + period, std::memory_order_relaxed)) return;
  sync_modules();
}
}  // namespace modules_detail

void forget_modules() noexcept {
  g_lock.reset();
  g_known_count = 0;
  g_seen_adds.store(~uint64_t{0}, std::memory_order_relaxed);
}

}  // namespace memloupe::recorder
