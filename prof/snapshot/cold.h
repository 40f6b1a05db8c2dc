/* Cold blocks (MP_COLD=1): live blocks the program did not write since the
 * previous snapshot. cold.c walks the pointer map at each snapshot and
 * gives each counter slot its memcold and coldage; cold_pages.c asks the
 * kernel which pages were written. Full capture only. */
#ifndef MP_COLD_H
#define MP_COLD_H

#include "record.h"

/* cold.c */
void cold_init(void);                   /* at start: the mode checked, the kernel probed, the first interval begun */
void cold_after_fork_child(void);       /* a new process: no page has an age yet */
void cold_scan(uint32_t limit);         /* at a snapshot (not a peak's): slots 1 .. limit-1 */
/* Slot `slot`'s live bytes cold at the latest scan and the largest age of
 * its cold blocks, in snapshots (0, 0 without MP_COLD or before a scan). */
void cold_of(uint32_t slot, uint64_t *memcold, uint64_t *coldage);

/* cold_pages.c: which pages were written since the previous scan. The
 * scan is pages_begin, pages_written for each run of pages (ascending),
 * pages_end (which starts the next interval). */
const char *pages_init(void);           /* the kernel's mechanism ("soft-dirty", ...); NULL: none */
void pages_after_fork_child(void);
int pages_begin(void);
void pages_written(uintptr_t first_page, size_t n, uint8_t *written);     /* written[i]: page first_page+i */
void pages_end(void);

#endif
