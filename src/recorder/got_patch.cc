#include "recorder/got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "recorder/spin_lock.h"

namespace memloupe::recorder {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#endif

constexpr uintptr_t kPage = 4096;

// Old values by GOT address: open addressing, no deletion (a slot of a module
// unloaded since is overwritten when a module reuses the address).
struct Saved {
  uintptr_t slot;
  uintptr_t old;
};
constexpr size_t kSavedCap = 1 << 15;
constinit Saved g_saved[kSavedCap];

constinit SpinLock g_lock;
constinit const GotHook* g_hooks = nullptr;
constinit size_t g_hook_count = 0;
constinit bool g_installed = false;  // between got_patch_all and got_restore_all

Saved* saved_for(uintptr_t slot, bool insert) noexcept {
  size_t i = (slot >> 3) * 0x9E3779B97F4A7C15ull >> 49;  // 15 bits
  for (size_t probes = 0; probes < kSavedCap; ++probes, i = (i + 1) & (kSavedCap - 1)) {
    if (g_saved[i].slot == slot) return &g_saved[i];
    if (g_saved[i].slot == 0) {
      if (!insert) return nullptr;
      g_saved[i].slot = slot;
      return &g_saved[i];
    }
  }
  return nullptr;  // full: the entry is patched but restored to the global definition
}

const GotHook* hook_named(std::string_view name) noexcept {
  for (size_t i = 0; i < g_hook_count; ++i)
    if (name == g_hooks[i].name) return &g_hooks[i];
  return nullptr;
}

bool is_hook(uintptr_t value) noexcept {
  for (size_t i = 0; i < g_hook_count; ++i)
    if (reinterpret_cast<uintptr_t>(g_hooks[i].hook) == value) return true;
  return false;
}

// The parts of a loaded module's dynamic section the walk needs.
struct ModuleView {
  uintptr_t base = 0;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* rela = nullptr;
  size_t rela_bytes = 0;
  const ElfW(Rela)* jmprel = nullptr;
  size_t jmprel_bytes = 0;
  uintptr_t relro_begin = 0, relro_end = 0;
};

bool skipped(const dl_phdr_info* info, uintptr_t self_base) noexcept {
  if (info->dlpi_addr == self_base) return true;
  const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
  // The loader allocates through its own pointers to libc's malloc, and the vDSO
  // calls nothing.
  return name.find("/ld-linux") != std::string_view::npos || name.find("linux-vdso") != std::string_view::npos ||
         name.find("/ld64.so") != std::string_view::npos || info->dlpi_phnum == 0;
}

bool view_module(const dl_phdr_info* info, ModuleView& m) noexcept {
  m.base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(m.base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      // The pages the loader made read-only: it rounds both ends down, so a
      // partial last page stays writable (and must stay so).
      m.relro_begin = (m.base + ph.p_vaddr) & ~(kPage - 1);
      m.relro_end = (m.base + ph.p_vaddr + ph.p_memsz) & ~(kPage - 1);
    }
  }
  if (dyn == nullptr) return false;
  // The loader has relocated these pointers in place on most targets; where it
  // has not (a read-only dynamic section), they are still offsets.
  const auto addr = [&](uintptr_t p) { return p < m.base ? p + m.base : p; };
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    switch (dyn->d_tag) {
      case DT_SYMTAB: m.symtab = reinterpret_cast<const ElfW(Sym)*>(addr(dyn->d_un.d_ptr)); break;
      case DT_STRTAB: m.strtab = reinterpret_cast<const char*>(addr(dyn->d_un.d_ptr)); break;
      case DT_RELA: m.rela = reinterpret_cast<const ElfW(Rela)*>(addr(dyn->d_un.d_ptr)); break;
      case DT_RELASZ: m.rela_bytes = dyn->d_un.d_val; break;
      case DT_JMPREL: m.jmprel = reinterpret_cast<const ElfW(Rela)*>(addr(dyn->d_un.d_ptr)); break;
      case DT_PLTRELSZ: m.jmprel_bytes = dyn->d_un.d_val; break;
      default: break;
    }
  }
  return m.symtab != nullptr && m.strtab != nullptr;
}

// Writes one GOT entry, lifting RELRO's write protection around the store.
void write_slot(const ModuleView& m, uintptr_t slot, uintptr_t value) noexcept {
  const bool relro = slot >= m.relro_begin && slot < m.relro_end;
  void* page = reinterpret_cast<void*>(slot & ~(kPage - 1));
  if (relro && ::mprotect(page, kPage, PROT_READ | PROT_WRITE) != 0) return;
  __atomic_store_n(reinterpret_cast<uintptr_t*>(slot), value, __ATOMIC_RELEASE);
  if (relro) ::mprotect(page, kPage, PROT_READ);
}

// Calls f(module, slot address, hook) for each GOT entry naming a hooked function.
template <class F>
void for_each_hooked_slot(const ModuleView& m, F f) noexcept {
  for (auto [rel, bytes] : {std::pair{m.rela, m.rela_bytes}, std::pair{m.jmprel, m.jmprel_bytes}}) {
    if (rel == nullptr) continue;
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
      const uint32_t type = ELF64_R_TYPE(rel[i].r_info);
      const uint32_t sym = ELF64_R_SYM(rel[i].r_info);
      if ((type != kJumpSlot && type != kGlobDat) || sym == 0) continue;
      if (const GotHook* h = hook_named(m.strtab + m.symtab[sym].st_name)) f(m.base + rel[i].r_offset, *h);
    }
  }
}

enum class Walk { Patch, Restore };
struct WalkState {
  Walk walk;
  uintptr_t self_base;
  size_t changed;
};

int visit_module(dl_phdr_info* info, size_t, void* arg) {
  auto& w = *static_cast<WalkState*>(arg);
  ModuleView m;
  if (skipped(info, w.self_base) || !view_module(info, m)) return 0;
  for_each_hooked_slot(m, [&](uintptr_t slot, const GotHook& h) {
    const uintptr_t now = __atomic_load_n(reinterpret_cast<uintptr_t*>(slot), __ATOMIC_ACQUIRE);
    if (w.walk == Walk::Patch) {
      if (is_hook(now)) return;
      if (Saved* s = saved_for(slot, /*insert=*/true)) s->old = now;
      write_slot(m, slot, reinterpret_cast<uintptr_t>(h.hook));
    } else {
      if (!is_hook(now)) return;
      const Saved* s = saved_for(slot, /*insert=*/false);
      const uintptr_t old = s ? s->old : reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, h.name));
      if (old == 0) return;
      write_slot(m, slot, old);
    }
    ++w.changed;
  });
  return 0;
}

size_t walk(Walk kind) noexcept {
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&got_patch_all), &self);
  WalkState w{kind, reinterpret_cast<uintptr_t>(self.dli_fbase), 0};
  dl_iterate_phdr(visit_module, &w);
  return w.changed;
}

}  // namespace

size_t got_patch_all(const GotHook* hooks, size_t count) noexcept {
  LockGuard g(g_lock);
  g_hooks = hooks;
  g_hook_count = count;
  g_installed = true;
  return walk(Walk::Patch);
}

size_t got_patch_new() noexcept {
  LockGuard g(g_lock);
  return g_installed ? walk(Walk::Patch) : 0;
}

size_t got_restore_all() noexcept {
  LockGuard g(g_lock);
  if (g_hooks == nullptr) return 0;
  g_installed = false;
  const size_t n = walk(Walk::Restore);
  std::memset(g_saved, 0, sizeof(g_saved));
  return n;
}

}  // namespace memloupe::recorder
