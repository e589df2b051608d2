// ChunkWriter: appends chunks to a trace in order, compressing them with zstd
// on a worker thread, so that the caller (the compaction, which decodes events)
// goes on while the previous chunk is compressed. zstd at the finaliser's level
// costs about as much as decoding the events, so on two cores this takes it off
// the critical path. The bytes are those append_chunk_compressed would give.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "format/chunk.h"

namespace memloupe::finalize {

class ChunkWriter {
 public:
  // Chunks go to the end of `out`, which the caller must not touch until
  // finish() has returned. level <= 0 stores them, on the caller's thread.
  ChunkWriter(std::vector<uint8_t>& out, int level);
  ~ChunkWriter();  // finishes (without rethrowing)
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Queues a chunk; waits while kMaxQueued chunks are waiting (bounds memory).
  void append(format::ChunkType type, std::vector<uint8_t> payload);
  // Waits until every queued chunk is in `out`; rethrows what the worker threw
  // (std::bad_alloc), so a failure surfaces on the caller's thread.
  void finish();

  static constexpr size_t kMaxQueued = 2;

 private:
  struct Job {
    format::ChunkType type;
    std::vector<uint8_t> payload;
  };
  void run();

  std::vector<uint8_t>& out_;
  const int level_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;  // guarded by mutex_
  bool closing_ = false;   // guarded by mutex_
  std::exception_ptr failure_;  // written by the worker before it ends
  std::thread worker_;
};

}  // namespace memloupe::finalize
