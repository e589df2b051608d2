// Where the encoder's chunks go: the trace file, through a queue.
//
// write_chunk() runs under the trace lock (inside some thread's malloc), so it
// only copies the chunk into the ring. drain() — the flush thread, or exit — does
// the write(2)s, under the output lock, which is never held while taking the trace
// lock, and compresses the events and snapshot chunks on the way
// (chunk_compressor.h): what reaches the file is their final form. Only when
// the ring is full (the flush thread is 4 MiB behind) does the producer drain
// it itself, still under the trace lock: rare, and better than
// dropping a chunk (AllocIds count Alloc events, so a lost chunk would shift them).
//
// Failure policy (docs/RECORDER.md): the first error opening or writing the file
// is reported once on stderr, the rest of the data is dropped, and `on_failure`
// tells the recorder to stop. The program never sees an error.
//
// The descriptor lives above the program's usual range, and before each write
// the file behind it is checked against the one opened: a program that closes
// every descriptor (daemons do) and opens its own file on the same number must
// not receive trace bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "format/encoder.h"
#include "recorder/byte_ring.h"
#include "recorder/chunk_compressor.h"
#include "recorder/spin_lock.h"
#include "recorder/sys.h"

namespace memloupe::recorder {

class TraceOutput final : public format::ChunkSink {
 public:
  static constexpr size_t kRingBytes = 4 << 20;
  static constexpr size_t kMaxPath = 4096;
  using FailureHandler = void (*)() noexcept;

  // Creates (emptying) `path`, unless another live process writes it (claim());
  // with `never_overwrite`, an existing file is kept
  // and PATH.1, PATH.2, ... tried instead. False after reporting the failure.
  // Events and snapshot chunks are compressed at `zstd_level` (0: written raw);
  // `stream_events`: the events chunks as pieces of one zstd stream
  // (ChunkCompressor::set_level).
  bool open(const char* path, bool never_overwrite, FailureHandler on_failure,
            int zstd_level = 0, bool stream_events = false) noexcept;

  void write_chunk(std::span<const uint8_t> chunk) noexcept override;

  // For the default level (ChunkCompressor::set_program_threads): the
  // program's threads now, against the CPUs this process may run on.
  void set_program_threads(size_t threads) noexcept { compressor_.set_program_threads(threads, cpus_); }

  // True when the flush thread should be woken to drain early.
  bool half_full() const noexcept { return ring_.queued() > ring_.capacity() / 2; }
  void drain() noexcept;
  // Drains and closes: nothing can be written afterwards.
  void close() noexcept;
  // In a fork child: closes the inherited descriptor without writing anything
  // and forgets the queue (those bytes belong to the parent's trace).
  void abandon_in_child() noexcept;

  const char* path() const noexcept { return path_; }
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

 private:
  void drain_locked() noexcept;
  // Writes one queued record's bytes, as they are or compressed (fail() on an error).
  void write_record(bool compress, std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept;
  void fail(int err) noexcept;
  // Takes the file for this process, then empties it. The file is held under
  // flock(LOCK_EX) for as long as this process writes it (the lock goes with
  // the descriptor: a fork child's copy is closed, an exec closes it): an
  // image that would empty a trace another live process is writing runs
  // untraced instead, whatever its environment says (a program that re-adds
  // LD_PRELOAD and MEMLOUPE_OUTPUT to a cleaned environment, or execs by the
  // raw system call, which no hook sees: exec_follow.h). `memloupe run` asks
  // the same lock before it starts (cli/run_output.h).
  bool claim() noexcept;
  bool still_our_file() const noexcept;

  UniqueFd fd_;
  uint64_t device_ = 0, inode_ = 0;
  ByteRing ring_;  // records: u32 length, u32 kind (kStore or kCompress), bytes
  SpinLock io_lock_;
  ChunkCompressor compressor_;  // used under io_lock_
  size_t cpus_ = 1;  // in the process's affinity mask, counted at open()
  std::atomic<bool> failed_{false};
  FailureHandler on_failure_ = nullptr;
  char path_[kMaxPath + 8] = {};
};

}  // namespace memloupe::recorder
