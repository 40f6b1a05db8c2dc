/* Cold blocks (MP_COLD=1): at each snapshot but a peak's, the live blocks
 * whose pages the program did not write since the previous snapshot, per
 * counter slot: memcold (their bytes) and coldage (the largest of their
 * ages). Invariants: a page's age is the number of consecutive scans that
 * found it unwritten (a page that held no live block at the previous scan
 * starts again at 1: its past is not known); a block's age is the least of
 * its pages' ages, its first and last page included: a block sharing a page
 * with a block that was written is not cold (page granularity). The
 * profiler's own writes dirty only its own pages, never a program block's.
 * Runs in the flush, under its lock; memory from mp_map, never malloc. */
#include "cold.h"

#include <string.h>

static int enabled;

/* ------------------------------------------------------------ page ages */

/* A sparse table by page number: 2^17 leaves of 2^18 pages (1 GiB of
 * address space) each, mapped when first needed (untouched parts of a leaf
 * cost no memory). An entry: the scan that saw the page last (16 bits),
 * its age then (16 bits, saturating). */
#define LEAF_BITS 18
#define NLEAVES (1u << (47 - 12 - LEAF_BITS))
#define LEAF_BYTES ((size_t)sizeof(uint32_t) << LEAF_BITS)
static uint32_t **leaves;
static uint16_t scan_seq = 1;       /* this scan's number; 0 never sees a page */

static uint32_t *age_entry(uintptr_t page)
{
    uint32_t **leaf = &leaves[(page >> LEAF_BITS) & (NLEAVES - 1)];
    if (!*leaf) *leaf = mp_map(LEAF_BYTES, 0);     /* grows with the live heap, as the pointer map: not capped */
    return *leaf ? &(*leaf)[page & ((1u << LEAF_BITS) - 1)] : NULL;
}

/* The page's new age: 0 written; one more when unwritten since the
 * previous scan saw it, else 1. No room for its entry: 0 (not known cold). */
static void age_page(uintptr_t page, int written)
{
    uint32_t *e = age_entry(page);
    if (!e) return;
    uint32_t age = *e & 0xffff;
    if (written) age = 0;
    else if ((uint16_t)(*e >> 16) == (uint16_t)(scan_seq - 1)) age += age < 0xffff;
    else age = 1;
    *e = (uint32_t)scan_seq << 16 | age;
}

static uint32_t page_age(uintptr_t page)
{
    uint32_t *e = age_entry(page);
    return e && (uint16_t)(*e >> 16) == scan_seq ? *e & 0xffff : 0;
}

/* ------------------------------------------------------------ the live blocks */

static struct ptrmap_block *blocks, *sorted_tmp;
static size_t nblocks, blocks_cap;

static int blocks_reserve(size_t need)
{
    if (need <= blocks_cap) return 0;
    size_t cap = need + need / 2 + 4096, bytes = cap * sizeof *blocks;
    struct ptrmap_block *b = mp_map(bytes, 0), *t = mp_map(bytes, 0);
    if (!b || !t) {
        mp_unmap(b, b ? bytes : 0), mp_unmap(t, t ? bytes : 0);
        return -1;
    }
    memcpy(b, blocks, nblocks * sizeof *blocks);
    mp_unmap(blocks, blocks_cap * sizeof *blocks), mp_unmap(sorted_tmp, blocks_cap * sizeof *blocks);
    blocks = b, sorted_tmp = t, blocks_cap = cap;
    return 0;
}

/* Every live block, shard by shard, while the program goes on: a block
 * freed since its shard was read counts as live in this scan (its slot's
 * memcold is bounded by its memlive when written). */
static int collect_blocks(void)
{
    int rc = 0;
    nblocks = 0;
    ptrmap_walk_begin();
    for (unsigned i = 0; i < PTRMAP_SHARDS && !rc; i++) {
        size_t n;
        while ((n = ptrmap_shard_copy(i, blocks + nblocks, blocks_cap - nblocks)) > blocks_cap - nblocks)
            if ((rc = blocks_reserve(nblocks + n))) break;
        if (!rc) nblocks += n;
    }
    ptrmap_walk_end();
    return rc;
}

/* By address: a radix sort, 11 bits a pass over bits 3..46 (blocks are
 * 8-byte aligned, user addresses below 2^47); a pass whose digit is the
 * same for every block is skipped. */
static void sort_blocks(void)
{
    static size_t count[1 << 11];
    for (int shift = 3; shift < 47; shift += 11) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < nblocks; i++) count[(blocks[i].ptr >> shift) & 2047]++;
        if (nblocks && count[(blocks[0].ptr >> shift) & 2047] == nblocks) continue;
        for (size_t d = 0, at = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = at, at += c;
        }
        for (size_t i = 0; i < nblocks; i++) sorted_tmp[count[(blocks[i].ptr >> shift) & 2047]++] = blocks[i];
        struct ptrmap_block *t = blocks;
        blocks = sorted_tmp, sorted_tmp = t;
    }
}

static uintptr_t first_page(const struct ptrmap_block *b) { return b->ptr / PAGE_SIZE; }
static uintptr_t last_page(const struct ptrmap_block *b) { return (b->ptr + (b->size ? b->size - 1 : 0)) / PAGE_SIZE; }

/* ------------------------------------------------------------ the scan */

/* The pages first .. last, asked of the kernel in pieces, aged. */
static void age_run(uintptr_t first, uintptr_t last)
{
    static uint8_t written[1 << 16];
    for (uintptr_t p = first; p <= last;) {
        size_t n = last - p + 1 < sizeof written ? last - p + 1 : sizeof written;
        pages_written(p, n, written);
        for (size_t i = 0; i < n; i++) age_page(p + i, written[i]);
        p += n;
    }
}

/* Every page under a live block, in runs of neighbouring pages (ascending:
 * one read of the kernel's table per run, not per block). */
static void age_pages(void)
{
    uintptr_t run_first = 0, run_last = 0;
    int open = 0;
    for (size_t i = 0; i < nblocks; i++) {
        uintptr_t f = first_page(&blocks[i]), l = last_page(&blocks[i]);
        if (open && f <= run_last + 1) {
            if (l > run_last) run_last = l;
            continue;
        }
        if (open) age_run(run_first, run_last);
        run_first = f, run_last = l, open = 1;
    }
    if (open) age_run(run_first, run_last);
}

/* By slot: the latest scan's cold bytes and largest age. */
static uint64_t *slot_cold, *slot_age;
static size_t nslots;

static int slots_reserve(uint32_t limit)
{
    if (limit <= nslots) return 0;
    size_t cap = (size_t)limit + limit / 2 + 1024;
    uint64_t *c = mp_map(cap * sizeof *c, 1), *a = mp_map(cap * sizeof *a, 1);
    if (!c || !a) {
        mp_unmap(c, c ? cap * sizeof *c : 0), mp_unmap(a, a ? cap * sizeof *a : 0);
        return -1;
    }
    mp_unmap(slot_cold, nslots * sizeof *slot_cold), mp_unmap(slot_age, nslots * sizeof *slot_age);
    slot_cold = c, slot_age = a, nslots = cap;
    return 0;
}

static void credit_blocks(uint32_t limit)
{
    for (size_t i = 0; i < nblocks; i++) {
        const struct ptrmap_block *b = &blocks[i];
        if (b->slot >= limit) continue;     /* a slot newer than the snapshot's */
        uint32_t age = UINT32_MAX;
        for (uintptr_t p = first_page(b), l = last_page(b); p <= l && age; p++) {
            uint32_t a = page_age(p);
            if (a < age) age = a;
        }
        if (!age) continue;
        slot_cold[b->slot] += b->size;
        if (age > slot_age[b->slot]) slot_age[b->slot] = age;
    }
}

void cold_scan(uint32_t limit)
{
    if (!enabled) return;
    if (slots_reserve(limit)) return;       /* out of memory: the previous scan's values */
    memset(slot_cold, 0, nslots * sizeof *slot_cold), memset(slot_age, 0, nslots * sizeof *slot_age);
    if (collect_blocks() || pages_begin()) return;
    sort_blocks();
    age_pages();
    pages_end();            /* the next interval starts */
    credit_blocks(limit);
    scan_seq = (uint16_t)(scan_seq + 1) ? (uint16_t)(scan_seq + 1) : 1;
}

void cold_of(uint32_t slot, uint64_t *memcold, uint64_t *coldage)
{
    int known = enabled && slot < nslots;
    *memcold = known ? slot_cold[slot] : 0;
    *coldage = known ? slot_age[slot] : 0;
}

/* ------------------------------------------------------------ life */

void cold_init(void)
{
    if (!mp_opt.cold) return;
    if (!mp_track_all) {
        mp_log("warning", "MP_COLD=1 needs full capture (every live block known): with MP_SAMPLE, "
               "MP_STACKS=tags|none or MP_ENABLED=0 no cold blocks are recorded");
        return;
    }
    const char *how = pages_init();
    if (!how) {
        mp_log("warning", "MP_COLD=1: this kernel does not tell which pages were written (no soft-dirty bits, "
               "CONFIG_MEM_SOFT_DIRTY; no userfaultfd write-protection with PAGEMAP_SCAN, Linux 6.7): "
               "memcold and coldage stay 0");
        return;
    }
    leaves = mp_map(NLEAVES * sizeof *leaves, 0);
    enabled = leaves != NULL;
}

/* The child's blocks are its own (the pointer map starts empty) and its
 * pages' history starts now. */
void cold_after_fork_child(void)
{
    if (!enabled) return;
    for (size_t i = 0; i < NLEAVES; i++)
        if (leaves[i]) mp_unmap(leaves[i], LEAF_BYTES), leaves[i] = NULL;
    if (slot_cold) memset(slot_cold, 0, nslots * sizeof *slot_cold), memset(slot_age, 0, nslots * sizeof *slot_age);
    scan_seq = 1;
    pages_after_fork_child();
}
