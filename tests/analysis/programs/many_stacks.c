// 2^18 allocations, each from a backtrace of its own: a binary recursion 18
// calls deep through two functions, the path spelling the allocation's number.
// Its analysis index holds one entry per stack, over one chunk's 16 MiB (~75
// bytes per stack since the index's version 3; 2^16 stacks were enough before).
// Version 4 stores a stack's frames as differences from the frame before, so
// the two functions that alternate in a stack are 64 KiB apart: ~3 bytes per
// frame, ~125 per stack (57 with them side by side, under a chunk's 16 MiB).
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

__attribute__((noinline, aligned(65536))) static void left(int depth, unsigned path) { descend(depth, path); sink = 0; }
__attribute__((noinline, aligned(65536))) static void right(int depth, unsigned path) { descend(depth, path); sink = 0; }

int main(void) {
  for (unsigned path = 0; path < 1u << DEPTH; ++path) descend(0, path);
  return 0;
}
