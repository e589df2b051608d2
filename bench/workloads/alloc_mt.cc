// Workload (a): multithreaded, allocation-heavy. Producer/consumer pairs; each producer
// allocates messages of mixed sizes (16 B – 64 KiB, skewed small) that its consumer frees
// on another thread, plus short-lived scratch blocks (some grown with realloc) and a table
// of long-lived blocks replaced at random. Every choice comes from a per-thread seeded
// PRNG and every hand-off goes through a fixed-capacity queue, so the sequence of calls
// made by each thread — hence the total count and the checksum — is the same on every
// run whatever the scheduling. At the defaults it makes about 4 million allocation calls
// (and as many frees) on 4 threads.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "args.h"
#include "rng.h"
#include "spsc_queue.h"

namespace {

using bench::Rng;

// How a block was obtained decides how it must be released.
enum class Kind : uint32_t { kMalloc, kCalloc, kNewArray };

struct Header {  // at the start of every message; messages are >= 16 bytes
  uint32_t size;
  Kind kind;
};

struct Record {  // a small C++ object allocated with plain operator new
  uint64_t key;
  uint64_t value;
  char tag[32];
};

constexpr size_t kLongLivedSlots = 8192;
constexpr std::align_val_t kCacheLine{64};

struct Tally {  // per-thread results, combined in thread order at the end
  uint64_t calls = 0;
  uint64_t checksum = 0;
};

void mix(uint64_t& sum, uint64_t value) { sum = (sum ^ value) * 0x100000001b3ull; }

__attribute__((noinline)) Header* make_message(Rng& rng, uint32_t seq, Tally& t) {
  size_t size = bench::skewed_size(rng);
  Kind kind = static_cast<Kind>(rng.below(3));
  void* p = kind == Kind::kMalloc   ? std::malloc(size)
            : kind == Kind::kCalloc ? std::calloc(1, size)
                                    : static_cast<void*>(new char[size]);
  ++t.calls;
  std::memset(p, static_cast<int>(seq & 0xff), size);
  auto* h = static_cast<Header*>(p);
  h->size = static_cast<uint32_t>(size);
  h->kind = kind;
  return h;
}

__attribute__((noinline)) void release_message(Header* h) {
  if (h->kind == Kind::kNewArray) {
    delete[] reinterpret_cast<char*>(h);
  } else {
    std::free(h);
  }
}

// A scratch buffer that sometimes grows twice before it is dropped.
__attribute__((noinline)) void short_lived_buffer(Rng& rng, Tally& t) {
  size_t size = bench::skewed_size(rng);
  auto* p = static_cast<unsigned char*>(std::malloc(size));
  ++t.calls;
  p[0] = 1;
  if (rng.one_in(4)) {
    for (int grow = 0; grow < 2; ++grow) {
      size *= 2;
      p = static_cast<unsigned char*>(std::realloc(p, size));
      ++t.calls;
      p[size - 1] = 2;
    }
  }
  mix(t.checksum, p[0] + size);
  std::free(p);
}

__attribute__((noinline)) void short_lived_record(Rng& rng, Tally& t) {
  auto record = std::make_unique<Record>();
  ++t.calls;
  record->key = rng.next();
  std::snprintf(record->tag, sizeof record->tag, "r%llu",
                static_cast<unsigned long long>(record->key % 1000));
  mix(t.checksum, record->key ^ static_cast<unsigned char>(record->tag[1]));
}

// Long-lived blocks: half plain malloc, half cache-line aligned operator new. A slot's
// kind is fixed by its index so that the right release function is known.
class LongLived {
 public:
  ~LongLived() {
    for (size_t i = 0; i < kLongLivedSlots; ++i) release(i);
  }

  __attribute__((noinline)) void replace(Rng& rng, Tally& t) {
    size_t i = rng.below(kLongLivedSlots);
    release(i);
    size_t size = bench::skewed_size(rng);
    slots_[i] = (i & 1) ? ::operator new(size, kCacheLine) : std::malloc(size);
    ++t.calls;
    std::memset(slots_[i], static_cast<int>(i & 0xff), size);
    mix(t.checksum, size + i);
  }

 private:
  void release(size_t i) {
    if (slots_[i] == nullptr) return;
    if (i & 1) {
      ::operator delete(slots_[i], kCacheLine);
    } else {
      std::free(slots_[i]);
    }
    slots_[i] = nullptr;
  }

  std::vector<void*> slots_ = std::vector<void*>(kLongLivedSlots, nullptr);
};

using Queue = bench::SpscQueue<Header*, 1024>;

void producer(uint64_t seed, uint64_t iterations, Queue& queue, Tally& t) {
  Rng rng(seed);
  LongLived long_lived;
  t.calls += 1;  // the slot vector inside LongLived
  for (uint64_t i = 0; i < iterations; ++i) {
    queue.push(make_message(rng, static_cast<uint32_t>(i), t));
    if (rng.one_in(2)) {
      short_lived_buffer(rng, t);
    } else {
      short_lived_record(rng, t);
    }
    if (rng.one_in(4)) long_lived.replace(rng, t);
  }
  queue.push(nullptr, /*last=*/true);
}

// Frees every message on this thread; copies the head of every other one first.
__attribute__((noinline)) void consume_one(Header* h, Tally& t) {
  auto* bytes = reinterpret_cast<unsigned char*>(h);
  mix(t.checksum, h->size + bytes[h->size - 1]);
  if (bytes[h->size - 1] % 2 == 0) {
    size_t n = h->size < 256 ? h->size : 256;
    char* copy = new char[n];
    ++t.calls;
    std::memcpy(copy, bytes, n);
    mix(t.checksum, static_cast<unsigned char>(copy[n - 1]));
    delete[] copy;
  }
  release_message(h);
}

void consumer(Queue& queue, Tally& t) {
  while (Header* h = queue.pop()) consume_one(h, t);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t iterations = 670000;
  uint64_t pairs = 2;
  uint64_t seed = 42;
  bench::parse_args(argc, argv,
                    {{"iterations", &iterations, "messages per producer"},
                     {"pairs", &pairs, "producer/consumer thread pairs (threads = 2 x pairs)"},
                     {"seed", &seed, "PRNG seed"}});
  if (pairs == 0 || pairs > 64) {
    std::fprintf(stderr, "--pairs must be 1..64\n");
    return 2;
  }
  std::vector<Queue> queues(pairs);
  std::vector<Tally> tallies(2 * pairs);
  std::vector<std::thread> threads;
  threads.reserve(2 * pairs);
  for (uint64_t p = 0; p < pairs; ++p) {
    threads.emplace_back(producer, seed * 1000 + p, iterations, std::ref(queues[p]),
                         std::ref(tallies[2 * p]));
    threads.emplace_back(consumer, std::ref(queues[p]), std::ref(tallies[2 * p + 1]));
  }
  for (std::thread& th : threads) th.join();
  Tally total;
  for (const Tally& t : tallies) {
    total.calls += t.calls;
    mix(total.checksum, t.checksum);
  }
  std::printf("alloc_mt threads=%llu calls=%llu checksum=%016llx\n",
              static_cast<unsigned long long>(2 * pairs),
              static_cast<unsigned long long>(total.calls),
              static_cast<unsigned long long>(total.checksum));
  return 0;
}
