// Symbolizer: raw return addresses -> inlined frame lists, with one libdw
// session per module file, opened on first use and kept for the whole run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reader/reader.h"
#include "symbolize/elf_file.h"
#include "symbolize/inflated_files.h"
#include "symbolize/module_map.h"

namespace memloupe::symbolize {

struct SymbolizerOptions {
  // Root of the separate debug files (.build-id/xx/yyyy.debug under it).
  std::string debug_root = "/usr/lib/debug";
  // Told once per module file that cannot be used (missing, other build).
  std::function<void(const std::string&)> warn;
  // The compressed files inflated once for every symbolizer made with these
  // options or their copies (the finaliser's frames' and globals', which open
  // the same files: inflated_files.h).
  std::shared_ptr<InflatedFiles> inflated = std::make_shared<InflatedFiles>();
};

// One return address and the module it was recorded in.
struct AddressInModule {
  uint64_t address = 0;
  ModuleIndex module;
};

// As the trace convention says, backtraces hold return addresses: the
// address after the call. The symbolizer looks up the call itself, at
// `return_address - 1`, so a call that ends a function or an inlined block is
// attributed to it rather than to whatever follows.
class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions options = {});

  // Frames for each address, in order (innermost inlined frame first; empty
  // when nothing is known). Batches are much faster than single addresses:
  // each compilation unit is walked once per batch.
  std::vector<std::vector<reader::OwnedFrame>> symbolize(const ModuleMap& modules,
                                                         std::span<const AddressInModule> addresses);
  // As symbolize(), telling of no unusable file (as file_quietly()): a
  // follower symbolises the addresses it reads while the program runs, and
  // what it found unusable is told by tell() once the program has exited.
  std::vector<std::vector<reader::OwnedFrame>> symbolize_quietly(const ModuleMap& modules,
                                                                 std::span<const AddressInModule> addresses);
  // Tells of the unusable files of these addresses' modules what symbolize()
  // would have, in the same order, and what was told already not again.
  void tell(const ModuleMap& modules, std::span<const AddressInModule> addresses);
  // One address recorded while `module` was mapped over it.
  std::vector<reader::OwnedFrame> symbolize(const Module& module, uint64_t return_address);

  // The opened file of `module` (shared with symbolize()), or null if unusable.
  ElfFile* file(const Module& module) { return file_for(module); }

  size_t files_opened() const;
  size_t modules_unusable() const;

  // The opened file of `module` (opened now if it was not), or null when it
  // cannot be used; owned by this symbolizer.
  ElfFile* file_for(const Module& module);

  // As file_for(), silently, to open files ahead of the addresses (a
  // follower does while the program runs, finalize/follow.h): a file that
  // cannot be used is told of by the first file_for() that asks for it, as
  // if it had not been opened before.
  ElfFile* file_quietly(const Module& module) { return open(module, false); }

 private:
  ElfFile* open(const Module& module, bool warn);
  std::vector<std::vector<reader::OwnedFrame>> symbolize(const ModuleMap& modules,
                                                         std::span<const AddressInModule> addresses, bool warn);

  SymbolizerOptions options_;
  // Keyed by (path, build-id); null when the module's file cannot be used.
  using Key = std::pair<std::string, std::vector<uint8_t>>;
  std::map<Key, std::unique_ptr<ElfFile>> files_;
  // Unusable files prepare() opened, with what was not told yet.
  std::map<Key, std::string> untold_;
};

// Symbolises every address into `out`; addresses with nothing known are left out.
void symbolize_all(Symbolizer& symbolizer, const ModuleMap& modules,
                   std::span<const AddressInModule> addresses, reader::SymbolTable& out);
// The table of symbolize_all(), made quietly (Symbolizer::symbolize_quietly).
void symbolize_all_quietly(Symbolizer& symbolizer, const ModuleMap& modules,
                           std::span<const AddressInModule> addresses, reader::SymbolTable& out);

}  // namespace memloupe::symbolize
