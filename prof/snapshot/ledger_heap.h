/* What ledger.c and ledger_heap.c share: the lines, and the heap's split.
 * The lines past NLINES are accumulators the split folds into the written
 * lines (the program's mmapped chunks, the profiler's, a fork child's
 * inherited mappings), never written themselves. */
#ifndef MP_LEDGER_HEAP_H
#define MP_LEDGER_HEAP_H

#include "flush.h"
#include "maps.h"

#include <malloc.h>

enum line { L_RSS, L_LIVE, L_OVERHEAD, L_FREE, L_MMAP_ANON, L_MMAP_FILE, L_STACKS, L_MODULES, L_PROFILER,
            L_UNEXPLAINED, NLINES,
            L_CHUNK = NLINES,   /* the program's mmapped chunks (its large blocks) */
            L_OWN_CHUNK,        /* the profiler's own mmapped chunks */
            L_OLD_ANON, L_OLD_FILE,     /* a fork child's inherited mappings */
            NACC };

/* What the heap holds now, read together right after smaps: the
 * program's live requested bytes (a fork child's inherited blocks
 * included), the profiler's own blocks, and mallinfo2, except at a fatal
 * signal (the interrupted code may hold an arena's lock). */
struct heap_now { int64_t live, own; int have_mi; struct mallinfo2 mi; };
struct heap_now heap_now(int fatal);

/* The heap's resident bytes (bytes[L_FREE]: the arenas', bytes[L_CHUNK]:
 * the program's mmapped chunks') split into live, overhead, free and the
 * profiler's. */
void split_heap(uint64_t bytes[NACC], uint64_t sizes[NACC], const struct heap_now *h);

/* 1: the block whose chunk starts at page is the profiler's own (a block
 * of its work's large enough to be a mapping of its own). */
int ledger_own_chunk(uintptr_t page);

/* A fork child's mappings made by its parent (and its parent's), as the
 * parent's mapping recorder knew them at the fork. */
size_t ledger_inherited(const struct maps_range **out);

#endif
