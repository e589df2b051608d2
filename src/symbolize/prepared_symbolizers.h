// The finaliser's two symbolisers with the modules' files opened ahead of the
// addresses, and with what does not depend on the addresses already read (a
// compressed debug file decompressed, the unit index, the data symbols and
// globals' lines): a follower (finalize/follow.h) does it while the program
// runs, so that it is not left for after the exit. What is prepared changes
// no result: the same files are opened with the same outcome whenever they
// are, and a file that cannot be used is told of when it is first asked for.
#pragma once

#include "symbolize/global_names.h"
#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace memloupe::symbolize {

class PreparedSymbolizers {
 public:
  explicit PreparedSymbolizers(const SymbolizerOptions& options) : frames_(options), globals_(options), namer_(globals_) {}
  PreparedSymbolizers(const PreparedSymbolizers&) = delete;
  PreparedSymbolizers& operator=(const PreparedSymbolizers&) = delete;

  // For frames(): `module` holds addresses to symbolise.
  void prepare_frames(const Module& module);
  // For namer(): the trace will have a snapshot whose roots may be in `module`.
  void prepare_globals(const Module& module) { namer_.prepare(module); }

  // The backtraces' (and the addon's), on the symbolisation's thread.
  Symbolizer& frames() { return frames_; }
  // The snapshots' annex's, on another thread than frames() (libdw's sessions
  // are not shared between threads).
  GlobalNamer& namer() { return namer_; }

 private:
  Symbolizer frames_;
  Symbolizer globals_;
  GlobalNamer namer_;  // uses globals_
};

}  // namespace memloupe::symbolize
