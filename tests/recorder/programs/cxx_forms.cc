// C++ allocation for the recorder's end-to-end tests: every operator new/delete
// form, exceptions through allocating frames, allocation in thread-local
// destructors, and blocks freed by other threads. Modes print what they did.
#include <sys/prctl.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

void* volatile sink;
// Stores where the optimiser must assume it is read (so no allocation is elided).
void* keep(void* p) {
  sink = p;
  return p;
}

void report(const char* fn, unsigned long calls, unsigned long bytes) {
  std::printf("%s %lu %lu\n", fn, calls, bytes);
}

// Each form 10 times; sizes 40 (alignment 64 for the aligned forms).
void forms() {
  constexpr int kN = 10;
  constexpr std::size_t kSize = 40;
  constexpr std::align_val_t kAlign{64};
  const std::nothrow_t& nt = std::nothrow;
  for (int i = 0; i < kN; ++i) {
    ::operator delete(keep(::operator new(kSize)));
    ::operator delete(keep(::operator new(kSize)), kSize);
    ::operator delete(keep(::operator new(kSize, nt)), nt);
    ::operator delete(keep(::operator new(kSize, kAlign)), kAlign);
    ::operator delete(keep(::operator new(kSize, kAlign)), kSize, kAlign);
    ::operator delete(keep(::operator new(kSize, kAlign, nt)), kAlign, nt);
    ::operator delete[](keep(::operator new[](kSize)));
    ::operator delete[](keep(::operator new[](kSize)), kSize);
    ::operator delete[](keep(::operator new[](kSize, nt)), nt);
    ::operator delete[](keep(::operator new[](kSize, kAlign)), kAlign);
    ::operator delete[](keep(::operator new[](kSize, kAlign)), kSize, kAlign);
    ::operator delete[](keep(::operator new[](kSize, kAlign, nt)), kAlign, nt);
  }
  report("operator new", 2 * kN, 2 * kN * kSize);
  report("operator new(nothrow)", kN, kN * kSize);
  report("operator new(align)", 2 * kN, 2 * kN * kSize);
  report("operator new(align, nothrow)", kN, kN * kSize);
  report("operator new[]", 2 * kN, 2 * kN * kSize);
  report("operator new[](nothrow)", kN, kN * kSize);
  report("operator new[](align)", 2 * kN, 2 * kN * kSize);
  report("operator new[](align, nothrow)", kN, kN * kSize);
  for (const char* d : {"operator delete", "operator delete(sized)", "operator delete(align)",
                        "operator delete(sized, align)", "operator delete(nothrow)",
                        "operator delete(align, nothrow)", "operator delete[]",
                        "operator delete[](sized)", "operator delete[](align)",
                        "operator delete[](sized, align)", "operator delete[](nothrow)",
                        "operator delete[](align, nothrow)"})
    report(d, kN, 0);
}

[[gnu::noinline]] void throw_from_depth(int depth) {
  std::string local(100, static_cast<char>('a' + depth % 26));  // heap, freed by unwinding
  if (depth == 0) throw std::runtime_error("deep failure with a long message: " + local);
  throw_from_depth(depth - 1);
}

void exceptions() {
  int caught = 0;
  for (int i = 0; i < 200; ++i) {
    try {
      throw_from_depth(5);
    } catch (const std::runtime_error& e) {
      caught += std::strlen(e.what()) > 30;
    }
  }
  bool bad_alloc = false;
  try {
    sink = ::operator new(std::size_t{1} << 62);  // cannot succeed: our hook must throw
  } catch (const std::bad_alloc&) {
    bad_alloc = true;
  }
  void* nothrow = ::operator new[](std::size_t{1} << 62, std::nothrow);
  std::printf("caught %d bad_alloc %d nothrow %s\n", caught, bad_alloc, nothrow ? "nonnull" : "null");
}

struct AllocatesOnExit {
  ~AllocatesOnExit() {
    std::string* s = new std::string(200, 'z');  // in the thread's exit path
    sink = s;
    delete s;
  }
};

void tls() {
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([] {
      ::prctl(PR_SET_NAME, "tls-worker");  // a rename no hook sees
      thread_local AllocatesOnExit guard;
      sink = &guard;
    });
  for (auto& t : threads) t.join();
  std::printf("tls threads 4\n");
}

// Producers allocate, consumers free: every block dies on another thread.
void threads() {
  constexpr int kProducers = 6, kConsumers = 6, kEach = 5000;
  std::mutex m;
  std::condition_variable cv;
  std::deque<char*> queue;
  int finished = 0;
  std::vector<std::thread> all;
  for (int p = 0; p < kProducers; ++p)
    all.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        char* block = new char[16 + (i + p) % 200];
        std::lock_guard<std::mutex> g(m);
        queue.push_back(block);
        cv.notify_one();
      }
      std::lock_guard<std::mutex> g(m);
      ++finished;
      cv.notify_all();
    });
  for (int c = 0; c < kConsumers; ++c)
    all.emplace_back([&] {
      for (;;) {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, [&] { return !queue.empty() || finished == kProducers; });
        if (queue.empty()) return;
        char* block = queue.front();
        queue.pop_front();
        g.unlock();
        delete[] block;
      }
    });
  for (auto& t : all) t.join();
  std::printf("threads blocks %d\n", kProducers * kEach);
}

// operator new(0) must return distinct non-null pointers (the hooks' fast path
// passes size 0 through to malloc, which gives a unique pointer for it).
void new_zero() {
  void* blocks[8];  // not a vector: its own allocations would be counted
  for (size_t i = 0; i < 8; i += 2) {
    blocks[i] = keep(::operator new(0));
    blocks[i + 1] = keep(new char[0]);
  }
  bool ok = true;
  for (size_t i = 0; i < 8; ++i)
    for (size_t j = 0; j < i; ++j) ok &= blocks[i] != nullptr && blocks[i] != blocks[j];
  std::printf("new_zero %s\n", ok ? "distinct" : "NOT DISTINCT");
  for (size_t i = 0; i < 8; i += 2) {
    ::operator delete(blocks[i]);
    delete[] static_cast<char*>(blocks[i + 1]);
  }
}

// Threads pass blocks around a shared pool: each takes a random slot's block,
// grows it with realloc (often moving it), and either puts it back or frees it and
// puts a fresh one there. Addresses are reused across threads all the time: the
// test checks that the trace never shows one address held by two live blocks.
void realloc_race() {
  constexpr int kThreads = 4, kSteps = 20000, kPool = 64;
  std::mutex m;
  std::vector<char*> pool(kPool, nullptr);
  std::vector<std::thread> all;
  for (int w = 0; w < kThreads; ++w)
    all.emplace_back([&, w] {
      unsigned x = 2463534242u + static_cast<unsigned>(w);
      for (int i = 0; i < kSteps; ++i) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        const size_t slot = x % kPool;
        char* block;
        {
          std::lock_guard<std::mutex> g(m);
          block = pool[slot];
          pool[slot] = nullptr;
        }
        if (block == nullptr) block = static_cast<char*>(std::malloc(16 + x % 300));
        block = static_cast<char*>(std::realloc(block, 16 + (x >> 8) % 2000));
        block[0] = 1;
        if (x & 1) {
          std::free(block);
          block = static_cast<char*>(std::malloc(16 + (x >> 4) % 500));
        }
        std::lock_guard<std::mutex> g(m);
        std::swap(block, pool[slot]);
        std::free(block);  // what another thread left there meanwhile, if anything
      }
    });
  for (auto& t : all) t.join();
  for (char* block : pool) std::free(block);
  std::printf("realloc_race steps %d\n", kThreads * kSteps);
}

// Many more threads than cores, each allocating as fast as it can at a stack
// depth that changes every call: the staging ring's consumer (the flush thread)
// gets a small share of the CPU, so writers find the ring full and sleep in it
// (staging_ring.h, wait_for_room) many times a run. Each thread's sizes are its
// own (16 * (thread + 1) + step % 16), so the test can count every call.
int flood_depth(int depth, size_t size) {
  if (depth > 0) return flood_depth(depth - 1, size) + 1;
  void* p = keep(std::malloc(size));
  p = keep(std::realloc(p, size + 1));
  std::free(p);
  return 0;
}

void flood() {
  constexpr int kThreads = 16, kSteps = 20000;
  std::vector<std::thread> all;
  for (int w = 0; w < kThreads; ++w)
    all.emplace_back([w] {
      for (int i = 0; i < kSteps; ++i) flood_depth(i % 40, 16 * static_cast<size_t>(w + 1) + i % 16);
    });
  for (auto& t : all) t.join();
  std::printf("flood threads %d steps %d\n", kThreads, kSteps);
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "baseline";
  if (!std::strcmp(mode, "forms")) forms();
  else if (!std::strcmp(mode, "exceptions")) exceptions();
  else if (!std::strcmp(mode, "tls")) tls();
  else if (!std::strcmp(mode, "threads")) threads();
  else if (!std::strcmp(mode, "realloc_race")) realloc_race();
  else if (!std::strcmp(mode, "new_zero")) new_zero();
  else if (!std::strcmp(mode, "flood")) flood();
  else if (std::strcmp(mode, "baseline")) return 2;
  std::printf("%s done\n", mode);
  return 0;
}
