/* Linked statically: memloupe run must refuse it without running it. It would
   leave a file named by its first argument if it ran. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc > 1) {
    FILE* f = fopen(argv[1], "w");
    if (f) fclose(f);
  }
  free(malloc(100));
  return 0;
}
