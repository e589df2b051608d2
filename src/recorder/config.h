// The recorder's configuration, read once from the environment (docs/RECORDER.md
// lists the variables). Fixed-size, so it can be read inside the first malloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "format/events.h"
#include "recorder/chunk_compressor.h"

namespace memloupe::recorder {

// 512 KiB, jemalloc's default (lg_prof_sample = 19): a sample costs a few µs
// (unwind + encode), so a program allocating 1 GB/s pays ~2000 samples/s, well
// under 1% of a core, while a site allocating B bytes is estimated with a relative
// standard error of sqrt(512 KiB / B): 10% at 50 MiB, 1% at 5 GiB.
inline constexpr uint64_t kDefaultEvery = 512 * 1024;
inline constexpr uint64_t kMaxEvery = uint64_t{1} << 40;
inline constexpr uint32_t kDefaultDepth = 128;
inline constexpr uint32_t kDefaultFlushMs = 1000;
// µs per tick of an --all trace's event times (docs/FORMAT.md §5.2, chosen by
// measurement in §9): events there are ~0.1-1 µs apart, so a time per event at
// 1 µs is entropy zstd cannot remove. Sampled traces keep 1 µs: their events
// are far apart, and a coarser tick would save nothing.
inline constexpr uint32_t kDefaultAllTimeUnitUs = 32;

struct Config {
  static constexpr size_t kMaxPath = 4096;
  char output[kMaxPath] = {};  // MEMLOUPE_OUTPUT as given (with %p); empty: not recording
  format::Mode mode = format::Mode::Sampled;
  // MEMLOUPE_ADDRESSES=1: --all traces carry every block's address. Off by
  // default: nothing downstream needs them (frees name blocks by id, snapshots
  // carry their blocks' addresses) and they were a third of an --all trace
  // (docs/FORMAT.md §9); tests of the allocator's address order turn them on.
  bool addresses = false;
  uint64_t every = kDefaultEvery;  // mean bytes between samples (Mode::Sampled)
  uint32_t depth = kDefaultDepth;  // frames per backtrace
  bool follow_fork = false;
  // Exec'd images of the traced process start their own trace (docs/RECORDER.md,
  // "Children: fork and exec"); MEMLOUPE_FOLLOW_EXEC=0 ends the recording there.
  bool follow_exec = true;
  // MEMLOUPE_SESSION_PID: set by a traced process for the images it execs, so
  // that an image tells "I am the traced process, exec'd" (same pid) from "I am
  // a descendant through a fork that is not followed" (another pid).
  std::optional<uint64_t> session_pid;
  bool start_paused = false;  // recording starts at memloupe_start()
  uint32_t flush_ms = kDefaultFlushMs;
  // MEMLOUPE_TIME_UNIT: µs per tick of the event times, a power of two from 1
  // to 2^20 (the encoder's shift); 0 (unset): the mode's default.
  uint32_t time_unit_us = 0;
  uint32_t time_unit() const noexcept {
    if (time_unit_us != 0) return time_unit_us;
    return mode == format::Mode::All ? kDefaultAllTimeUnitUs : 1;
  }
  // MEMLOUPE_ZSTD_LEVEL: the flush thread's zstd level for the events and
  // snapshot chunks (recorder/chunk_compressor.h), by default chosen by how
  // many threads the program runs; 0 writes them raw, and the finaliser then
  // compacts them as it did before the recorder compressed.
  int zstd_level = ChunkCompressor::kAuto;
  std::optional<uint64_t> seed;  // MEMLOUPE_SEED: reproducible sampling (tests)
  bool snapshot_at_exit = true;  // MEMLOUPE_SNAPSHOT_AT_EXIT (heap snapshot at exit; --all only)
  int snapshot_signal = 0;       // MEMLOUPE_SNAPSHOT_SIGNAL: takes a snapshot on this signal; 0: none

  bool enabled() const noexcept { return output[0] != '\0'; }
};

// getenv, or a table in tests.
using EnvLookup = const char* (*)(const char* name);

// Reads every MEMLOUPE_* variable; a malformed value is reported once on stderr and
// the default is kept.
Config read_config(EnvLookup lookup) noexcept;

// "4096", "512K", "512KiB", "2M", "2MiB", "1G", "1TiB" (binary units; KB/MB/GB/TB
// mean the same).
std::optional<uint64_t> parse_size(std::string_view text) noexcept;

// Replaces %p by the pid and %% by %; false if the result does not fit in `cap`
// (including the terminating NUL).
bool expand_output_path(std::string_view pattern, uint32_t pid, char* out, size_t cap) noexcept;

}  // namespace memloupe::recorder
