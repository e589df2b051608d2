#include "recorder/byte_ring.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace memloupe::recorder {
namespace {

std::vector<uint8_t> drain(ByteRing& r) {
  std::vector<uint8_t> out;
  const ByteRing::Pieces p = r.peek();
  out.insert(out.end(), p.first.begin(), p.first.end());
  out.insert(out.end(), p.second.begin(), p.second.end());
  r.consume(out.size());
  return out;
}

TEST(ByteRingTest, AllOrNothingAndWrapAround) {
  ByteRing r;
  ASSERT_TRUE(r.init(16));
  const std::vector<uint8_t> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  ASSERT_TRUE(r.push(a));
  EXPECT_FALSE(r.push(a));  // 6 bytes free: nothing is written
  EXPECT_EQ(r.queued(), 10u);
  EXPECT_EQ(drain(r), a);
  ASSERT_TRUE(r.push(a));  // starts at offset 10: wraps
  const ByteRing::Pieces p = r.peek();
  EXPECT_EQ(p.first.size(), 6u);
  EXPECT_EQ(p.second.size(), 4u);
  EXPECT_EQ(drain(r), a);
  EXPECT_EQ(r.queued(), 0u);
}

TEST(ByteRingTest, ProducerAndConsumerThreadsKeepOrder) {
  ByteRing r;
  ASSERT_TRUE(r.init(1024));
  constexpr uint32_t kMessages = 50'000;
  std::thread producer([&] {
    for (uint32_t i = 0; i < kMessages;) {
      uint8_t msg[7];
      for (uint8_t& b : msg) b = static_cast<uint8_t>(i * 7 + (&b - msg));
      if (r.push(msg)) {
        ++i;
      } else {
        std::this_thread::yield();  // the machine may have fewer cores than threads
      }
    }
  });
  uint64_t seen = 0;
  while (seen < uint64_t{kMessages} * 7) {
    const std::vector<uint8_t> got = drain(r);
    if (got.empty()) std::this_thread::yield();
    for (uint8_t b : got) {
      ASSERT_EQ(b, static_cast<uint8_t>(seen)) << seen;
      ++seen;
    }
  }
  producer.join();
}

}  // namespace
}  // namespace memloupe::recorder
