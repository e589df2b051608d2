// A library the process_zoo program dlopens: it allocates when loaded and on call.
#include <stdlib.h>

static void* g_loaded;
__attribute__((constructor)) static void on_load(void) { g_loaded = malloc(4321); }
__attribute__((destructor)) static void on_unload(void) { free(g_loaded); }

__attribute__((noinline)) void* plugin_allocate(size_t n) { return malloc(n); }
