/* memloupe's public C API, provided by the preload library libmemloupe_preload.so.
 *
 * The functions are declared weak: a program that uses them links and runs
 * without memloupe, where their addresses are null. Check before calling:
 *
 *     #include <memloupe/memloupe.h>
 *     if (memloupe_marker) memloupe_marker("phase 2");
 *
 * or use the MEMLOUPE_CALL macro, which does nothing without the library:
 *
 *     MEMLOUPE_CALL(memloupe_marker, "phase 2");
 *
 * Everything here is a no-op (returning -1 where a result is returned) when the
 * process is not recording (MEMLOUPE_OUTPUT unset, or the trace has ended).
 * All functions are thread-safe. See docs/RECORDER.md.
 */
#ifndef MEMLOUPE_MEMLOUPE_H
#define MEMLOUPE_MEMLOUPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MEMLOUPE_API
#define MEMLOUPE_API __attribute__((weak))
#endif

#define MEMLOUPE_CALL(fn, ...) ((fn) ? (void)(fn)(__VA_ARGS__) : (void)0)

/* Resumes sampling after memloupe_stop() (or MEMLOUPE_START_PAUSED=1).
 * Returns 0 if the process is now recording, -1 if there is no trace. */
MEMLOUPE_API int memloupe_start(void);

/* Stops sampling new allocations; frees of blocks already in the trace are still
 * recorded, so they do not look leaked. Returns 0, or -1 if there is no trace. */
MEMLOUPE_API int memloupe_stop(void);

/* Puts a named point in time into the trace (shown on timelines). */
MEMLOUPE_API void memloupe_marker(const char* name);

/* Writes everything recorded so far to the file now. Returns 0, or -1. */
MEMLOUPE_API int memloupe_flush(void);

/* Takes a heap snapshot now (docs/RETENTION.md): every live block, the roots
 * (globals, every thread's stack frames, registers and TLS) and the pointers
 * between them, written into the trace under `label`; `memloupe retention`
 * reads it. Other threads are stopped for the scan. Needs --all
 * (MEMLOUPE_MODE=all). Returns 0, or -1 if no snapshot was taken. */
MEMLOUPE_API int memloupe_snapshot(const char* label);

/* One sampled allocation, as the statistical memory profiling model sees it:
 * the block holds `n_samples` sample points (each stands for MEMLOUPE_EVERY
 * bytes), and the backtrace starts at the caller of the allocation function. */
typedef struct memloupe_sample {
  uint64_t id;                /* the allocation's id in the trace */
  uint32_t n_samples;
  const char* function;       /* "malloc", "operator new[]", ... */
  size_t size;                /* bytes requested */
  void* address;
  const uint64_t* backtrace;  /* return addresses, innermost first */
  size_t depth;
} memloupe_sample;

/* Called for every sampled allocation. Return non-zero to have on_free called
 * when this block is freed. Runs inside the allocating call, on its thread:
 * keep it short. Allocations made inside it are not recorded. */
typedef int (*memloupe_alloc_callback)(const memloupe_sample* sample, void* user);
typedef void (*memloupe_free_callback)(uint64_t id, void* address, void* user);

/* Installs (or, with nulls, removes) the callbacks. Install them before other
 * threads allocate: a call racing the change may see the old or the new set.
 * Returns 0, or -1 if the process is not recording. */
MEMLOUPE_API int memloupe_set_callbacks(memloupe_alloc_callback on_alloc,
                                        memloupe_free_callback on_free, void* user);

/* Trackers: the callbacks above, with data of the program's own attached to a
 * tracked block. on_track returns a non-null tracker to be told when the block
 * dies; on_untrack then receives that same pointer (the allocation's id and
 * address too). The tracker is the program's: memloupe never dereferences it.
 * Installing trackers replaces callbacks set with memloupe_set_callbacks (and the
 * other way round); memloupe_set_callbacks and its int-returning callback stay
 * as they were. Same rules: runs inside the allocating (freeing) call on its
 * thread, allocations made inside are not recorded. Returns 0, or -1 if the
 * process is not recording. */
typedef void* (*memloupe_track_callback)(const memloupe_sample* sample, void* user);
typedef void (*memloupe_untrack_callback)(uint64_t id, void* address, void* tracker, void* user);
MEMLOUPE_API int memloupe_set_trackers(memloupe_track_callback on_track,
                                       memloupe_untrack_callback on_untrack, void* user);

/* Frames recorded per backtrace from now on (0: none, at most 256; the
 * callbacks' memloupe_sample::depth follows). Returns 0, or -1 if the process is
 * not recording or `depth` is out of range. */
MEMLOUPE_API int memloupe_set_depth(unsigned depth);

/* Samples each allocated byte with probability `rate` from now on: one sample
 * per 1/rate bytes on average (rounded to whole bytes, at most 2^32 - 1), as
 * `memloupe run --rate`. The trace records each change (and each depth change)
 * and the estimates weigh every sample by the rate it was taken at. The calling
 * thread switches at once; other threads at their next sample point (that one
 * sample is recorded at the old rate it was drawn at). Returns 0, or
 * -1 if the process is not recording, records every call (--all) or `rate` is
 * out of range. */
MEMLOUPE_API int memloupe_set_rate(double rate);

#ifdef __cplusplus
}
#endif

#endif /* MEMLOUPE_MEMLOUPE_H */
