// The entry points `memloupe attach` calls in a running process after dlopen'ing
// this library there (src/attach/, docs/ATTACH.md). The process has no
// MEMLOUPE_* environment, so the configuration comes as the text of such
// variables ("MEMLOUPE_OUTPUT=/abs/path\nMEMLOUPE_EVERY=524288\n") written into
// the target's memory by the injector, read by the same read_config() as at start-up.
#include <dlfcn.h>

#include <cstring>
#include <string_view>

#include "format/attach_marker.h"
#include "memloupe/memloupe.h"
#include "recorder/flush_thread.h"
#include "recorder/got_patch.h"
#include "recorder/lifecycle.h"
#include "recorder/modules.h"
#include "recorder/real_funcs.h"
#include "recorder/recorder.h"
#include "recorder/unwind/unwind.h"

#define MEMLOUPE_ATTACH_ENTRY extern "C" __attribute__((visibility("default")))

using namespace memloupe::recorder;

namespace {

// The configuration text, NUL-separated "NAME=value" entries ending in an empty one.
constexpr size_t kConfigCap = 8192;
constinit char g_config_text[kConfigCap];

const char* config_lookup(const char* name) {
  const size_t n = std::strlen(name);
  for (const char* e = g_config_text; *e != '\0'; e += std::strlen(e) + 1)
    if (std::strncmp(e, name, n) == 0 && e[n] == '=') return e + n + 1;
  return nullptr;
}

bool store_config(const char* text) noexcept {
  const size_t n = text ? strnlen(text, kConfigCap) : kConfigCap;
  if (n + 2 > kConfigCap) return false;
  std::memcpy(g_config_text, text, n);
  g_config_text[n] = g_config_text[n + 1] = '\0';
  for (size_t i = 0; i < n; ++i)
    if (g_config_text[i] == '\n') g_config_text[i] = '\0';
  return true;
}

// The names whose GOT entries are pointed at this library's definitions: the
// hooks of hooks.cc and process_hooks.cc.
constexpr const char* kHookedNames[] = {
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "free", "malloc_usable_size",
    "_Znwm", "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_Znam", "_ZnamRKSt9nothrow_t", "_ZnamSt11align_val_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv", "_ZdlPvm", "_ZdlPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdlPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPv", "_ZdaPvm", "_ZdaPvSt11align_val_t",
    "_ZdaPvmSt11align_val_t", "_ZdaPvRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
    "_exit", "_Exit", "abort", "pthread_setname_np", "execve", "execv", "execvpe", "execvp",
    "execl", "execle", "execlp", "fexecve", "execveat", "posix_spawn", "posix_spawnp"};
constexpr size_t kTableCap = std::size(kHookedNames);
constinit GotHook g_table[kTableCap];
constinit size_t g_table_size = 0;

// Modules loaded while attached (dlopen, or libc's own NSS and iconv modules)
// are redirected when the recorder's module rescan sees them: at the next
// sampled call of any thread. Not by hooking dlopen: glibc's dlopen searches
// the caller's RPATH/RUNPATH and expands $ORIGIN relative to the caller, which
// a hook in between would change to this library's.
void patch_new_modules() noexcept { got_patch_new(); }

// This library's own definitions: a dlopen'ed library is not in the global
// scope, so its own references to "malloc" were bound to libc's.
bool build_table() noexcept {
  if (g_table_size != 0) return true;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&patch_new_modules), &self) == 0) return false;
  void* handle = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  size_t n = 0;
  for (const char* name : kHookedNames) {
    Dl_info where{};
    void* p = dlsym(handle, name);
    if (p != nullptr && dladdr(p, &where) != 0 && where.dli_fbase == self.dli_fbase) g_table[n++] = {name, p};
  }
  dlclose(handle);  // only drops the reference RTLD_NOLOAD took
  g_table_size = n;
  return n != 0;
}

}  // namespace

// Result codes, also in src/attach/injector.cc (which says what they mean).
enum AttachResult : int { kAttached = 0, kAlreadyRecording = 1, kBadConfig = 2, kNoSession = 3, kNoHooks = 4 };

MEMLOUPE_ATTACH_ENTRY int memloupe_attach_begin(const char* config_text) {
  {
    HooksParked parked(t_state);
    if (tracking()) return kAlreadyRecording;
    if (!store_config(config_text)) return kBadConfig;
    resolve_real_funcs_for_attach();
    if (!build_table()) return kNoHooks;
    if (!start_session_late(config_lookup)) return tracking() ? kAlreadyRecording : kNoSession;
    unwind_load_fallback();
    install_process_handlers();
    start_flush_thread();
    got_patch_all(g_table, g_table_size);
    on_modules_changed(patch_new_modules);
  }
  // Says in the trace where it starts: blocks allocated before this are unknown
  // (their frees are ignored), and leaks and lifetimes count only later ones.
  memloupe_marker(memloupe::format::kAttachMarker.data());
  return kAttached;
}

MEMLOUPE_ATTACH_ENTRY int memloupe_attach_end() {
  HooksParked parked(t_state);
  // Entries first, so that calls stop arriving; the ones already inside a hook
  // pass through once the session has ended.
  got_restore_all();
  if (!tracking()) return kNoSession;
  end_session(memloupe::format::EndReason::Stopped);
  stop_flush_thread();
  return kAttached;
}
