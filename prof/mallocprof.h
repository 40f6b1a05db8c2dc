/* mallocprof public API: control the profiler from inside a program.
 *
 * Link with -lmallocprof_api (a library whose functions do nothing) and run
 * the program with LD_PRELOAD=libmallocprof.so: the preloaded library's
 * definitions take precedence and the calls act. Without the preload the
 * program runs unchanged. Every function is safe to call from any thread. */
#ifndef MALLOCPROF_H
#define MALLOCPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the preloaded profiler is there, whether or not it records
 * stacks now (mp_is_active); 0 with the do-nothing library. */
int mp_loaded(void);

/* The process's exact totals now: allocations, bytes requested, frees,
 * live bytes and the peak of live bytes (the allocator's block sizes in
 * the cheap modes, see prof/README.md). Returns 0, or -1 with every field 0
 * when the profiler is not loaded. */
struct mp_summary { uint64_t ncalls, memtot, nfree, memlive, maxlive; };
int mp_summary(struct mp_summary *out);

/* Writes the n largest stacks by a counter ("ncalls", "memtot", "nfree",
 * "memlive", "maxlive", "nlive"; NULL = "memtot") to the file descriptor,
 * as text with function names, from inside the program. Returns the
 * number of stacks written, -1 if the counter is unknown, the write failed
 * or there is no profiler. */
int mp_dump(int fd, const char *by, int n);

/* Start / stop recording stacks in every thread. Totals keep counting
 * allocations made while inactive (as "no stack"), so they stay exact. */
void mp_activate(void);
void mp_deactivate(void);

/* The same for the calling thread only; it takes precedence over the
 * process-wide switch for that thread until mp_thread_reset() is called. */
void mp_thread_activate(void);
void mp_thread_deactivate(void);
void mp_thread_reset(void);

/* Returns 1 if the preloaded profiler is present (and recording in this
 * thread), 0 otherwise (the do-nothing library answers 0). */
int mp_is_active(void);

/* Record stacks only for blocks of at least `bytes` (bytes > 0), only for
 * blocks smaller than -bytes (bytes < 0), or for every block (0). */
void mp_set_threshold(long bytes);

/* Write a snapshot now, labelled (label may be NULL). Returns 0 on success,
 * -1 if the write failed (the reason is printed on stderr) or there is no
 * profiler. */
int mp_snapshot(const char *label);

/* Named scopes: while a tag is pushed in a thread, its allocations' stacks
 * start with a frame named after the tag ([tag] module), outermost tag first.
 * Tags nest up to 16 deep per thread; the name is copied. */
void mp_tag_push(const char *name);
void mp_tag_pop(void);

#ifdef __cplusplus
}

namespace mp {
/* A tag for the life of a C++ scope: { mp::scope s("parse"); ... } */
class scope {
public:
    explicit scope(const char *name) { mp_tag_push(name); }
    ~scope() { mp_tag_pop(); }
    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;
};
}
#endif
#endif
