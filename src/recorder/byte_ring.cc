#include "recorder/byte_ring.h"

#include <cstring>

namespace memloupe::recorder {

bool ByteRing::init(size_t capacity) noexcept {
  map_ = Mapping::anonymous(capacity);
  data_ = static_cast<uint8_t*>(map_.data());
  mask_ = data_ ? capacity - 1 : 0;
  head_.store(0, std::memory_order_relaxed);
  tail_.store(0, std::memory_order_relaxed);
  return data_ != nullptr;
}

void ByteRing::reset() noexcept {
  map_.reset();
  data_ = nullptr;
  mask_ = 0;
  head_.store(0, std::memory_order_relaxed);
  tail_.store(0, std::memory_order_relaxed);
}

bool ByteRing::push(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept {
  if (data_ == nullptr || a.size() + b.size() > capacity() - queued()) return false;
  const uint64_t head = head_.load(std::memory_order_relaxed);
  uint64_t at = head;
  for (std::span<const uint8_t> bytes : {a, b}) {
    if (bytes.empty()) continue;  // (an empty span's data() may be null)
    const size_t pos = static_cast<size_t>(at) & mask_;
    const size_t first = bytes.size() < capacity() - pos ? bytes.size() : capacity() - pos;
    std::memcpy(data_ + pos, bytes.data(), first);
    std::memcpy(data_, bytes.data() + first, bytes.size() - first);
    at += bytes.size();
  }
  head_.store(at, std::memory_order_release);  // publishes the bytes
  return true;
}

ByteRing::Pieces ByteRing::peek() const noexcept {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  const size_t n = static_cast<size_t>(head_.load(std::memory_order_acquire) - tail);
  if (n == 0) return {};
  const size_t at = static_cast<size_t>(tail) & mask_;
  const size_t first = n < capacity() - at ? n : capacity() - at;
  return {{data_ + at, first}, {data_, n - first}};
}

void ByteRing::consume(size_t n) noexcept {
  // Release: the producer may reuse the bytes only after we are done reading them.
  tail_.store(tail_.load(std::memory_order_relaxed) + n, std::memory_order_release);
}

}  // namespace memloupe::recorder
