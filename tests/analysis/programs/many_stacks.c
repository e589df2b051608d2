// 2^18 allocations, each from a backtrace of its own: a binary recursion 18
// calls deep through two functions, the path spelling the allocation's number.
// Its analysis index holds one entry per stack, over one chunk's 16 MiB (~75
// bytes per stack since the index's version 3; 2^16 stacks were enough before).
#include <stdlib.h>

#define DEPTH 18

static void* volatile sink;

__attribute__((noinline)) static void left(int depth, unsigned path);
__attribute__((noinline)) static void right(int depth, unsigned path);

__attribute__((noinline)) static void descend(int depth, unsigned path) {
  if (depth == DEPTH) {
    sink = malloc(16 + (path & 7));
    free(sink);
    return;
  }
  if (path >> depth & 1) {
    right(depth + 1, path);
  } else {
    left(depth + 1, path);
  }
}

__attribute__((noinline)) static void left(int depth, unsigned path) { descend(depth, path); sink = 0; }
__attribute__((noinline)) static void right(int depth, unsigned path) { descend(depth, path); sink = 0; }

int main(void) {
  for (unsigned path = 0; path < 1u << DEPTH; ++path) descend(0, path);
  return 0;
}
