// The program the types tests record: every C++ way of creating objects that
// `memloupe types` must recognise, each with a known count (times the
// multiplier argv[1], default 1). tests/types/types_test.cc holds the expected
// answer; keep the two in step.
//
//   type          how                                   count (x multiplier)
//   Point         new, constructor inlined              100, 40 of them deleted
//   Record        new, constructor out of line           50
//   Shared        std::make_shared                       30
//   Poly          std::make_unique of a derived class    20
//   map node      std::map<int, Payload> insertions      40
//   hash node     std::unordered_map<long, Payload>      60
//   Elem[]        one vector buffer of 1000 elements      1 block
//   SpinLock      new from three call paths              10 + 5 + 2
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace typesprog {

struct Point {
  explicit Point(int v) : x(v), y(v * 2), z(v * 3) {}
  int x, y, z;
};

struct Record {
  __attribute__((noinline)) explicit Record(int v);
  long fields[5];
};
// Out of line on purpose: the type is then found through the call that follows
// operator new.
Record::Record(int v) {
  for (long& f : fields) f = v++;
}

struct Shared {
  explicit Shared(int v) : a(v), b(v + 1.0) {}
  int a;
  double b;
  char tag[20] = {};
};

struct Base {
  virtual ~Base() = default;
  virtual long value() const = 0;
};
struct Poly final : Base {
  explicit Poly(long v) : v_{v, v, v, v, v, v} {}
  long value() const override { return v_[0]; }
  long v_[6];
};

struct Payload {
  long a = 0, b = 0, c = 0;
};

struct Elem {
  int key;
  float weight;
  short tag;
};

struct SpinLock {
  SpinLock() : state(0), owner(-1) {}
  int state;
  long owner;
};

// Kept so that nothing is optimised away; leaked on purpose.
std::vector<void*>* keep;

__attribute__((noinline)) SpinLock* make_lock() { return new SpinLock(); }
__attribute__((noinline)) void locks_for_cache(int n) {
  for (int i = 0; i < n; ++i) keep->push_back(make_lock());
}
__attribute__((noinline)) void locks_for_queue(int n) {
  for (int i = 0; i < n; ++i) keep->push_back(make_lock());
}
__attribute__((noinline)) void locks_for_log(int n) {
  for (int i = 0; i < n; ++i) keep->push_back(make_lock());
}

__attribute__((noinline)) void points(int n) {
  std::vector<Point*> made;
  made.reserve(n);  // a vector buffer of Point* too: counted, not asserted
  for (int i = 0; i < n; ++i) made.push_back(new Point(i));
  for (int i = 0; i < n * 2 / 5; ++i) delete made[i];
  for (int i = n * 2 / 5; i < n; ++i) keep->push_back(made[i]);
}

__attribute__((noinline)) void records(int n) {
  for (int i = 0; i < n; ++i) keep->push_back(new Record(i));
}

__attribute__((noinline)) void shareds(int n, std::vector<std::shared_ptr<Shared>>& out) {
  for (int i = 0; i < n; ++i) out.push_back(std::make_shared<Shared>(i));
}

__attribute__((noinline)) void polys(int n, std::vector<std::unique_ptr<Base>>& out) {
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<Poly>(i));
}

}  // namespace typesprog

using namespace typesprog;

int main(int argc, char** argv) {
  const int m = argc > 1 ? std::atoi(argv[1]) : 1;
  keep = new std::vector<void*>();
  keep->reserve(1000 * static_cast<size_t>(m));  // one buffer up front: no growth in between
  points(100 * m);
  records(50 * m);
  static std::vector<std::shared_ptr<Shared>> shared;
  shared.reserve(30 * m);
  shareds(30 * m, shared);
  static std::vector<std::unique_ptr<Base>> poly;
  poly.reserve(20 * m);
  polys(20 * m, poly);
  static std::map<int, Payload> tree;
  for (int i = 0; i < 40 * m; ++i) tree[i].a = i;
  static std::unordered_map<long, Payload> hash;
  for (long i = 0; i < 60 * m; ++i) hash[i].b = i;
  static std::vector<Elem> elems;
  elems.reserve(1000 * m);
  locks_for_cache(10 * m);
  locks_for_queue(5 * m);
  locks_for_log(2 * m);
  std::printf("%zu %zu %zu\n", keep->size(), tree.size() + hash.size(), elems.capacity());
  return 0;
}
