/* A statically linked program for the attach tests' refusal: sleeps for argv[1] seconds. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) { return argc > 1 ? (int)sleep((unsigned)atoi(argv[1])) : 0; }
