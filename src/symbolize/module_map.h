// The modules (executable, shared libraries) of a traced process over time.
//
// A trace says which module was mapped where with ModuleLoad/ModuleUnload
// events; a later dlopen may reuse an address range that an unloaded library
// occupied. The map is fed the events in file order, and an address is
// resolved against the modules mapped at that point — the moment the address
// was recorded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/events.h"

namespace memloupe::symbolize {

// One load of one module: the same file loaded twice is two of these.
struct Module {
  std::string path;
  std::vector<uint8_t> build_id;
  uint64_t start = 0;      // lowest mapped address
  uint64_t end = 0;        // one past the highest
  uint64_t load_bias = 0;  // runtime address = ELF vaddr + load_bias

  // Whether the file's name (after the last '/') starts with `prefix`
  // ("libc.so" names glibc's C library whatever its directory and version).
  bool file_name_starts_with(std::string_view prefix) const {
    const size_t slash = path.rfind('/');
    return std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1).starts_with(prefix);
  }
};

// Index of a Module in ModuleMap::modules() (every load ever seen).
using ModuleIndex = format::StrongId<struct ModuleTag, uint32_t>;

class ModuleMap {
 public:
  void load(const format::ModuleLoad& event);
  void unload(uint64_t start);

  // The module mapped at `address` now (after the events applied so far).
  std::optional<ModuleIndex> find(uint64_t address) const;
  // The most recently loaded module that ever covered `address` — for addresses
  // seen while no module covered them (a recorder may report a dlopen'ed
  // library just after its first allocation).
  std::optional<ModuleIndex> find_any_time(uint64_t address) const;

  const std::vector<Module>& modules() const { return modules_; }
  const Module& operator[](ModuleIndex i) const { return modules_[i.value]; }

 private:
  std::vector<Module> modules_;
  std::map<uint64_t, ModuleIndex> mapped_;  // start -> module; ranges do not overlap
};

}  // namespace memloupe::symbolize
