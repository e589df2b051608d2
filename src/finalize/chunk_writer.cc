#include "finalize/chunk_writer.h"

#include "reader/chunk_io.h"

namespace memloupe::finalize {

using reader::append_chunk_compressed;

ChunkWriter::ChunkWriter(std::vector<uint8_t>& out, int level) : out_(out), level_(level) {
  if (level_ > 0) worker_ = std::thread([this] { run(); });
}

ChunkWriter::~ChunkWriter() {
  try {
    finish();
  } catch (...) {
    // Reported by an explicit finish(); a destructor must not throw.
  }
}

void ChunkWriter::append(format::ChunkType type, std::vector<uint8_t> payload) {
  if (!worker_.joinable()) {
    append_chunk_compressed(out_, type, payload, level_);
    return;
  }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < kMaxQueued || failure_; });
  if (failure_) return;  // finish() rethrows it
  queue_.push_back(Job{type, std::move(payload)});
  changed_.notify_all();
}

void ChunkWriter::finish() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    worker_.join();  // orders the worker's writes to out_ and failure_ before ours
  }
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void ChunkWriter::run() {
  try {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;  // closing, and everything is written
        job = std::move(queue_.front());
      }
      // Popped only once written, so the queue's bound also bounds what waits
      // in memory (queued payloads plus the one being compressed).
      append_chunk_compressed(out_, job.type, job.payload, level_);
      std::lock_guard lock(mutex_);
      queue_.pop_front();
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();
  }
}

}  // namespace memloupe::finalize
