// One module's ELF file opened for symbolisation (a libdw Dwfl session).
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "format/expected.h"
#include "reader/reader.h"
#include "symbolize/inline_frames.h"

namespace memloupe::symbolize {

class InflatedFiles;

// Lower-case hex, as in .build-id/ paths and messages.
std::string hex(std::span<const uint8_t> bytes);

using DwflPtr = std::unique_ptr<Dwfl, void (*)(Dwfl*)>;

class ElfFile {
 public:
  // Opens the module recorded as `path` with `build_id`.
  //
  // The file on disk is used only if its build-id equals the recorded one (or
  // nothing was recorded): another build of the same library would name the
  // wrong functions. Otherwise, and when the file is missing, the debug file
  // `<debug_root>/.build-id/xx/yyyy.debug` stands in for it: it has the same
  // symbol table and DWARF, which is all symbolisation needs (this is how a
  // trace is symbolised on a machine where only -dbg packages match).
  // Separate debug info for a matching file is found the same way, through
  // build-id or .gnu_debuglink (elfutils' standard search). A file with
  // compressed sections is read from its copy in `inflated` if given
  // (inflated_files.h), which must outlive the ElfFile.
  static Expected<std::unique_ptr<ElfFile>> open(const std::string& path,
                                                 std::span<const uint8_t> build_id,
                                                 const std::string& debug_root,
                                                 InflatedFiles* inflated = nullptr);

  // Frames of the instructions at ELF virtual addresses `vaddrs`, in order
  // (see InlineResolver).
  std::vector<std::vector<reader::OwnedFrame>> frames(std::span<const uint64_t> vaddrs) {
    return resolver_.resolve(vaddrs);
  }

  // What frames() needs whatever the addresses, done ahead (InlineResolver::prepare).
  void prepare() { resolver_.prepare(); }

  // The file actually read (the module's path or its debug file).
  const std::string& file() const { return file_; }
  // The libdw module, for lookups other than code frames: data symbols
  // (data_symbols.h) and type DWARF (src/types/).
  Dwfl_Module* module() const { return module_; }

 private:
  ElfFile(DwflPtr dwfl, Dwfl_Module* module, std::string file)
      : dwfl_(std::move(dwfl)), module_(module), resolver_(module), file_(std::move(file)) {}

  DwflPtr dwfl_;
  Dwfl_Module* module_;      // owned by dwfl_
  InlineResolver resolver_;  // uses the module owned by dwfl_
  std::string file_;
};

}  // namespace memloupe::symbolize
