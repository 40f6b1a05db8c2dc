/* What maps.c (the table and the interposed calls), maps_names.c (the
 * kinds' names) and maps_read.c (rss, the readers) share. Moved from maps.c
 * verbatim (its statics, now shared, are named maps_*). */
#ifndef MP_MAPS_INTERNAL_H
#define MP_MAPS_INTERNAL_H

#include "maps.h"
#include <pthread.h>

/* A (stack, thread) row; row 0 is unused. rss: at the latest measure. */
struct map_row { uint32_t stack_id, thread_seq; uint64_t nmap, mapped, maxmapped, rss; };
struct mapping { uintptr_t start, end; uint32_t row; uint32_t kind; };

#define HIDDEN __attribute__((visibility("hidden")))
extern HIDDEN pthread_mutex_t maps_mutex;
extern HIDDEN struct mapping *maps_table;      /* sorted by start, disjoint */
extern HIDDEN size_t maps_count;
extern HIDDEN struct map_row *maps_rowtab;
extern HIDDEN size_t maps_nrows;
extern HIDDEN _Atomic uint64_t maps_mapped_total;
#undef HIDDEN

static inline uintptr_t page_up(uintptr_t x) { return (x + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1); }

/* maps_names.c: a kind's name kept, as the pseudo return address naming it;
 * a file's (by its descriptor). */
uintptr_t maps_name_intern(const char *name);
uintptr_t maps_file_leaf(int fd);

#endif
