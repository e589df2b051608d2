// A single-producer, single-consumer byte queue in an anonymous mapping: the
// producer (the trace-lock holder) appends finished chunks, the consumer (the
// output-lock holder) writes them to the file. Neither side blocks the other.
//
//   0        tail            head         capacity
//   |........|#### queued ####|...........|   (positions wrap modulo capacity;
//                                             head/tail count bytes ever moved)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "recorder/sys.h"

namespace memloupe::recorder {

class ByteRing {
 public:
  ByteRing() noexcept = default;
  // `capacity` must be a power of two. False if the mapping failed.
  bool init(size_t capacity) noexcept;
  void reset() noexcept;  // frees the mapping

  size_t capacity() const noexcept { return mask_ + 1; }
  size_t queued() const noexcept {
    return static_cast<size_t>(head_.load(std::memory_order_acquire) -
                               tail_.load(std::memory_order_acquire));
  }

  // Producer: appends all of `bytes`, or nothing if they do not fit.
  bool push(std::span<const uint8_t> bytes) noexcept { return push(bytes, {}); }
  // The same for `a` then `b`, as one (a framed record: its header and body).
  bool push(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept;

  // Consumer: the queued bytes as up to two contiguous pieces, then consume(n).
  struct Pieces {
    std::span<const uint8_t> first, second;
  };
  Pieces peek() const noexcept;
  void consume(size_t n) noexcept;

 private:
  Mapping map_;
  uint8_t* data_ = nullptr;
  size_t mask_ = 0;
  // head_: written by the producer (release), read by the consumer (acquire), and
  // the reverse for tail_: the bytes between them are owned by the consumer.
  std::atomic<uint64_t> head_{0};
  std::atomic<uint64_t> tail_{0};
};

}  // namespace memloupe::recorder
