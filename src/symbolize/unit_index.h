// Finding the compilation unit that holds an address, with or without
// .debug_aranges. libdw's dwfl_module_addrdie (elfutils 0.188) looks only in
// .debug_aranges, which clang does not emit unless asked (-gdwarf-aranges):
// without this index a clang-built binary gets no file, line or inlined frame.
// The fallback reads every unit's own ranges (DW_AT_low_pc/high_pc/ranges)
// once, into a sorted table.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace memloupe::symbolize {

class UnitIndex {
 public:
  explicit UnitIndex(Dwfl_Module* module) : module_(module) {}

  // The unit DIE holding `pc` (a Dwfl address) and its bias (Dwfl address =
  // DWARF address + bias), or nullptr. The DIE stays valid while the index does.
  Dwarf_Die* find(uint64_t pc, Dwarf_Addr& bias);
  // Builds the index now rather than on the first find() (the module's
  // DWARF is read then: decompressed, for a compressed debug file).
  void prepare() {
    if (!built_) build();
  }

 private:
  struct Range {
    uint64_t start = 0;  // Dwfl addresses
    uint64_t end = 0;
    size_t unit = 0;     // into units_
  };
  void build();

  Dwfl_Module* module_;
  bool built_ = false;
  std::vector<Range> ranges_;  // by start
  struct Unit {
    Dwarf_Die die;
    Dwarf_Addr bias;
  };
  std::vector<Unit> units_;
};

}  // namespace memloupe::symbolize
