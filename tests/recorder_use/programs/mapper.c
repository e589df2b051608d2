/* Known mapped-memory activity, for the recorder's mmap/munmap/mremap/sbrk
   hooks (tests/recorder_use/mapped_test.cc):
     10 anonymous mmaps of 1 MiB; one grown to 2 MiB with mremap; 8 unmapped
     (one of them partially, from its start); one unmapped only in its tail
     (stays recorded); a file mapping (not recorded); a 10 MiB malloc (glibc
     serves it with its own mmap: recorded once, as malloc); the break grown by
     64 KiB in two sbrk calls, then returned. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024 * 1024)

int main(void) {
  char* maps[10];
  for (int i = 0; i < 10; ++i) {
    maps[i] = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (maps[i] == MAP_FAILED) return 1;
    maps[i][0] = 1;
  }
  maps[0] = mremap(maps[0], MIB, 2 * MIB, MREMAP_MAYMOVE);
  if (maps[0] == MAP_FAILED) return 2;
  munmap(maps[1], MIB / 2);               /* from the start: ends the record */
  munmap(maps[1] + MIB / 2, MIB / 2);
  munmap(maps[2] + MIB / 2, MIB / 2);     /* the tail only: maps[2] stays recorded */
  for (int i = 3; i < 10; ++i) munmap(maps[i], MIB);

  FILE* f = fopen("/proc/self/exe", "r");
  if (f) {
    void* file_map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    if (file_map != MAP_FAILED) munmap(file_map, 4096);
    fclose(f);
  }

  char* big = malloc(10 * MIB);
  big[0] = 1;
  free(big);

  char* start = sbrk(0);
  if (sbrk(32 * 1024) == (void*)-1 || sbrk(32 * 1024) == (void*)-1) return 3;
  if (brk(start) != 0) return 4;
  printf("mapped ok\n");
  return 0;
}
