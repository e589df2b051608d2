// The source frames of code addresses: DWARF inlined-subroutine walk.
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "reader/reader.h"
#include "symbolize/unit_index.h"

namespace memloupe::symbolize {

// A DWARF source file name as absolute as the DWARF allows: `file` joined to
// its unit's compilation directory `comp_dir` when that is absolute.
std::string full_path(const char* file, const char* comp_dir);

// For each of `pcs` (DWARF addresses of unit `cu`, ascending), the function
// DIEs (DW_TAG_subprogram, DW_TAG_inlined_subroutine) whose ranges hold it,
// outermost first: the one walk of the unit resolve() does (libdw's
// dwarf_getscopes walks the unit per pc, and misses scopes whose ranges are
// DWARF 5 range lists, as clang writes them).
std::vector<std::vector<Dwarf_Die>> function_chains(Dwarf_Die* cu, std::span<const uint64_t> pcs);

// The name of a function's DIE (a subprogram or an inlined call of one, through
// its abstract origin and specification): the demangled linkage name of a C++
// function, qualified and with its parameter types; else DW_AT_name; else "".
std::string dwarf_function_name(Dwarf_Die* scope);

// Resolves addresses of one module (in its Dwfl address space) to frames,
// innermost inlined frame first, the containing real function last:
//
//   pc in outer(), where inner() was inlined at outer.cc:12, and inner's code
//   at inner.h:5 is executing:
//     [0] inner  inner.h:5     <- the line table's location of pc
//     [1] outer  outer.cc:12   <- DW_AT_call_file/line/column of inner's
//                                 DW_TAG_inlined_subroutine
//
// Without DWARF for a pc: one frame named from the symbol table (no file);
// no frame at all when nothing is known.
//
// Cost: the scopes holding a pc are found by walking its compilation unit's
// DIE tree (libdw has no parent links, and dwarf_getscopes walks the unit for
// every single pc). resolve() walks each unit once for all the pcs it holds,
// so a batch costs about one pass over the DWARF of the units it touches.
class InlineResolver {
 public:
  explicit InlineResolver(Dwfl_Module* module) : module_(module), units_(module) {}

  // Frames for each of `pcs` (addresses inside instructions), in the same order.
  std::vector<std::vector<reader::OwnedFrame>> resolve(std::span<const uint64_t> pcs);
  // What does not depend on the pcs, done ahead: the unit index.
  void prepare() { units_.prepare(); }

 private:
  // `cu` (nullable) holds pc; Dwfl address = DWARF address + bias.
  std::vector<reader::OwnedFrame> frames_for(uint64_t pc, std::span<Dwarf_Die> chain, Dwarf_Die* cu,
                                             Dwarf_Addr bias);
  const std::string& function_name(Dwarf_Die* scope);
  const std::string* symbol_name(uint64_t pc);

  Dwfl_Module* module_;
  UnitIndex units_;
  // The ELF function symbols, sorted by address, read on first use: libdw's
  // dwfl_module_addrinfo scans the whole table for every lookup, which
  // dominates for binaries without DWARF. Each name is demangled when first
  // asked for (demangle_once).
  struct Symbol {
    uint64_t start = 0;
    uint64_t size = 0;
    const char* mangled = nullptr;  // in the module's symbol table (libdw's, alive as module_); null once demangled
    std::string name;               // demangled, once asked for
  };
  std::vector<Symbol> symbols_;
  bool symbols_read_ = false;
  // Demangled names by the DIE offset of the function's abstract origin (or
  // its own when it has none): every inlined copy of a function shares one.
  std::unordered_map<uint64_t, std::string> names_;
};

}  // namespace memloupe::symbolize
