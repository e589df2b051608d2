// The symbolisers' preparation while a follower reads the trace (follow.h):
// the module files that the symbolisation after the exit will open, and what
// of them does not depend on the addresses (symbolize/prepared_symbolizers.h),
// prepared on two threads of its own as the follower finds them, so that it is not
// left for after the exit (libc's compressed debug file alone took some 0.1 s
// there). What is prepared is what the finalise would do anyway: the files of
// modules that hold backtrace addresses, and for a trace that will end with
// a heap snapshot (Mode::All: the recorder takes one at exit unless told not
// to) the data symbols and globals' lines the annex names roots with.
//
// Its work is bounded (once per module file), and whatever of it is not done
// when the program exits is waited for, since the finalise would do it then
// anyway. The addresses the read finds are symbolised too, as they come, by
// the frames' thread once its files are prepared (quietly: an unusable file
// is told of after the exit, Symbolizer::tell): (a)'s 44 addresses took ~7 ms
// of CPU after its exit, serial (docs/RECORDER.md, "After the exit,
// 2026-11-26 (sixth round)"); their frames are the same in any batches.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "finalize/event_collector.h"
#include "format/events.h"
#include "reader/reader.h"
#include "symbolize/prepared_symbolizers.h"

namespace memloupe::finalize {

class SymbolPreparer {
 public:
  explicit SymbolPreparer(const symbolize::SymbolizerOptions& options);
  ~SymbolPreparer();  // abandons what is queued
  SymbolPreparer(const SymbolPreparer&) = delete;
  SymbolPreparer& operator=(const SymbolPreparer&) = delete;

  // The trace's header is read: the files its modules will surely include are
  // queued (the executable, the C library), before any chunk names them.
  void begin(const format::TraceInfo& info);
  // What the read so far added (modules, addresses) is queued; `globals`:
  // the trace will have a snapshot. Called by one thread at a time.
  void update(const Collected& read, bool globals);
  // Nothing more is queued: waits for what is and returns the symbolisers
  // (each of its two to be used by one thread); rethrows what the thread threw.
  // May be called by several threads.
  symbolize::PreparedSymbolizers& done();
  // After done(): the frames of the first symbolized() addresses of the read
  // given to update() (symbolize_all_quietly's table), taken by one caller.
  size_t symbolized() const { return symbolized_; }
  reader::SymbolTable take_symbols() { return std::move(symbols_); }

 private:
  struct Task {
    symbolize::Module module;
    bool globals = false;  // else frames
  };
  // Each of the two symbolisers is prepared on a thread of its own (libdw's
  // sessions are not shared between threads, and the two open the same files
  // separately): libc's frames and globals (~0.13 and ~0.2 s) side by side,
  // and what the trace names only at the exit (a program of few events
  // writes its module list then) done in half the time.
  void run(bool globals);

  symbolize::PreparedSymbolizers prepared_;  // the threads' until done() returns
  size_t modules_seen_ = 0;                  // update()'s
  size_t addresses_seen_ = 0;
  std::vector<bool> framed_;  // by module index: its frames task is queued
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<symbolize::Module> queue_[2];  // guarded by mutex_: [globals]
  // Guarded by mutex_: the addresses to symbolise after the frames' queue,
  // and the modules they are in (the read's so far).
  std::vector<symbolize::AddressInModule> addresses_;
  symbolize::ModuleMap address_modules_;
  reader::SymbolTable symbols_;  // the frames' thread's until done() returns
  size_t symbolized_ = 0;        // likewise: how many of the read's addresses
  bool closing_ = false;                    // guarded by mutex_: nothing more is queued
  bool abandon_ = false;                    // guarded by mutex_
  int idle_ = 0;                            // guarded by mutex_: the threads that have ended
  std::exception_ptr failure_;              // guarded by mutex_: the first thrown
  std::thread frames_thread_;               // last: started once the rest exists
  std::thread globals_thread_;
};

}  // namespace memloupe::finalize
