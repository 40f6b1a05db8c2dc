/* The heap's part of the ledger (ledger.c): its resident bytes split into
 * the program's live bytes, the allocator's overhead, free memory and the
 * profiler's blocks. The program's large blocks (mmapped chunks) are
 * measured apart, page by page: an untouched block is not resident, and
 * its untouched bytes are not taken from anyone else's. The profiler's
 * own mmapped chunks are known by address (ledger_own_block, on the
 * profiler's own pass-through path only), so that they are its line's. A
 * fork child keeps what it inherited: the parent's live bytes (blocks of
 * its heap now, freed or not since: bounded by the allocator's in-use
 * bytes) and the parent's mappings (ledger.c claims what nobody else
 * explains of them). */
#define _GNU_SOURCE
#include "ledger_heap.h"

#include <string.h>

/* ------------------------------------------------------------ the profiler's chunks */

#define OWN_CHUNKS 256
static _Atomic uintptr_t own_chunks[OWN_CHUNKS];    /* their pages (chunk starts), 0: free */

/* A block of the profiler's own work allocated (sign 1) or freed (-1):
 * an mmapped chunk (16 bytes into a page, IS_MMAPPED in its header) is
 * kept by address. The header is read only there: on the block's own page
 * whatever the allocator. A full table leaves a chunk unknown: the
 * program's, to the ledger. */
void ledger_own_block(void *p, int sign)
{
    if (((uintptr_t)p & (PAGE_SIZE - 1)) != 16 || !(((const uint64_t *)p)[-1] & 2)) return;
    uintptr_t page = (uintptr_t)p - 16, want = sign > 0 ? 0 : page, put = sign > 0 ? page : 0;
    for (size_t i = 0; i < OWN_CHUNKS; i++) {
        uintptr_t e = want;
        if (atomic_load_explicit(&own_chunks[i], memory_order_relaxed) == want &&
            atomic_compare_exchange_strong(&own_chunks[i], &e, put))
            return;
    }
}

int ledger_own_chunk(uintptr_t page)
{
    for (size_t i = 0; i < OWN_CHUNKS; i++)
        if (atomic_load_explicit(&own_chunks[i], memory_order_relaxed) == page) return 1;
    return 0;
}

/* ------------------------------------------------------------ a fork child's inheritance */

static int64_t inherited_live;          /* the parents' live bytes at the forks */
static struct maps_range *inherited;    /* their mappings */
static size_t ninherited, inherited_cap;

/* In the fork child, before its counters and mappings are reset (fork.c;
 * the mapping recorder's lock is this thread's). */
void ledger_after_fork_child(void)
{
    if (!mp_opt.ledger) return;
    struct mp_totals t;
    process_totals(0, &t);
    inherited_live += t.live > 0 ? t.live : 0;
    size_t n = maps_ranges_held(NULL, 0);
    if (!n || mp_grow_mapped(&inherited, &inherited_cap, ninherited + n, sizeof *inherited)) return;
    ninherited += maps_ranges_held(inherited + ninherited, n) < n ? 0 : n;
}

size_t ledger_inherited(const struct maps_range **out)
{
    *out = inherited;
    return ninherited;
}

/* ------------------------------------------------------------ the split */

struct heap_now heap_now(int fatal)
{
    struct heap_now h = { 0 };
    struct mp_totals t;
    process_totals(0, &t);
    h.live = t.live > 0 ? t.live : 0;
    h.own = atomic_load_explicit(&mp_own_heap, memory_order_relaxed);
    if (h.own < 0) h.own = 0;
    if (!fatal) h.mi = mallinfo2(), h.have_mi = 1;
    /* the inherited blocks still there: at most what is in use beyond the rest */
    int64_t old = inherited_live, room = h.have_mi ? (int64_t)(h.mi.uordblks + h.mi.hblkhd) - h.live - h.own : old;
    h.live += old < room ? old : room > 0 ? room : 0;
    return h;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The arenas' resident bytes (bytes[L_FREE]) split: the program's live
 * requested bytes there, the allocator's bytes beyond them on live
 * blocks (mallinfo2's in-use bytes less the live ones and the profiler's;
 * tcache'd blocks count as in use there), the rest free. Without
 * mallinfo2 the overhead is not known: it stays in 'heap free', whose
 * size is then 0. In-use bytes not all resident leave the arenas fewer
 * resident bytes than they add up to; 'heap free' is then 0 and the
 * shortfall is taken from the likeliest untouched first: the allocator's
 * (tcache'd blocks are in use for mallinfo2, carved from the top and
 * never written whole), then the profiler's blocks (SQLite's page cache
 * is allocated ahead), then the program's live blocks. The program's
 * mmapped chunks (bytes[L_CHUNK], sizes[L_CHUNK]: their pages) hold its
 * live bytes first (up to their size): their resident bytes are live
 * ones, what they have beyond the live bytes the allocator's. A line's
 * size stays what was in use. */
void split_heap(uint64_t bytes[NACC], uint64_t sizes[NACC], const struct heap_now *h)
{
    int64_t chunk_live = min64(h->live, (int64_t)sizes[L_CHUNK]);
    int64_t live_c = min64((int64_t)bytes[L_CHUNK], chunk_live);
    int64_t own = h->own - (int64_t)sizes[L_OWN_CHUNK], overhead = 0, slack = (int64_t)sizes[L_CHUNK] - chunk_live;
    if (own < 0) own = 0;
    if (h->have_mi) {
        overhead = (int64_t)(h->mi.uordblks + h->mi.hblkhd) - h->live - h->own;
        if (overhead < slack) overhead = slack;
    }
    sizes[L_FREE] = h->have_mi ? h->mi.fordblks : 0;
    int64_t heap = (int64_t)bytes[L_FREE];
    int64_t part[3] = { overhead > slack ? overhead - slack : 0, own, h->live - chunk_live };   /* the order they give up a shortfall */
    int64_t short_by = part[0] + part[1] + part[2] - heap;
    for (int i = 0; i < 3 && short_by > 0; i++) {
        int64_t take = min64(part[i], short_by);
        part[i] -= take, short_by -= take;
    }
    bytes[L_FREE] = (uint64_t)(heap - part[0] - part[1] - part[2]);
    bytes[L_OVERHEAD] = (uint64_t)(part[0] + (int64_t)bytes[L_CHUNK] - live_c), sizes[L_OVERHEAD] = (uint64_t)overhead;
    bytes[L_PROFILER] += (uint64_t)part[1] + bytes[L_OWN_CHUNK], sizes[L_PROFILER] += (uint64_t)h->own;
    bytes[L_LIVE] = (uint64_t)(part[2] + live_c), sizes[L_LIVE] = (uint64_t)h->live;
}
