/* The program's own mappings (mmap, mmap64, munmap, mremap, and its own
 * brk/sbrk growth; not the allocator's, which glibc makes with internal
 * calls and which are heap): each with the stack that made it, counted per
 * (stack, thread) as nmap, mapped, maxmapped and, at a snapshot, rss
 * (maps.c). The ledger (ledger.c) reads their totals and ranges here. */
#ifndef MP_MAPS_H
#define MP_MAPS_H

#include <stddef.h>
#include <stdint.h>

enum maps_kind { MAPS_ANON, MAPS_FILE, MAPS_NKINDS };    /* shared anonymous and brk count as MAPS_ANON */

/* The program's mappings now: bytes mapped and resident (present in this
 * process's page table, /proc/self/pagemap), per kind; nmap: the ranges
 * in the table now (a mapping that munmap split in two counts twice).
 * Off the allocation path (a snapshot, the ledger): it reads the page
 * table of every mapping. */
struct maps_usage { uint64_t mapped[MAPS_NKINDS], rss[MAPS_NKINDS]; uint64_t nmap; };
void maps_usage(struct maps_usage *u);

/* Copies up to max of the program's mappings, [start, end) and kind, in
 * address order; returns how many there are (more than max: some left out). */
struct maps_range { uintptr_t start, end; enum maps_kind kind; };
size_t maps_ranges(struct maps_range *out, size_t max);
size_t maps_ranges_held(struct maps_range *out, size_t max);  /* the same, maps_lock held (a fork child's) */

/* Bytes of the program's mappings mapped now (the ticks' mapped), cheap. */
uint64_t maps_mapped_now(void);

/* The (stack, thread) rows of the mappings (flush_maps.c), their rss
 * measured now: copies up to max; returns how many there are. Rows of
 * mappings recorded without a stack (no memory) are left out. */
struct maps_row { uint32_t stack_id, thread_seq; uint64_t nmap, mapped, maxmapped, rss; };
size_t maps_rows(struct maps_row *out, size_t max);

/* The name of a mapping stack's leaf (a pseudo address, MAPS_NAME_BASE +
 * index: record.h), NULL for any other address (symbols.c names it
 * '[mmap]'). */
const char *maps_name(uintptr_t addr);

/* fork (fork.c): the table's lock held across it; the child forgets the
 * parent's mappings, as it does the parent's heap blocks. */
void maps_lock(void);
void maps_unlock(void);
void maps_after_fork_child(void);

#endif
