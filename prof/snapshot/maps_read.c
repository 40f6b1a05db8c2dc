/* The program's mappings read: their resident bytes from
 * /proc/self/pagemap, the totals per kind, the ranges and rows the flush
 * and the ledger take. Moved from maps.c verbatim. */
#define _GNU_SOURCE
#include "hot.h"
#include "maps.h"
#include "maps_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ resident bytes */

/* Resident bytes of [start, end) (whole pages), read in batches. */
static uint64_t resident(int fd, uintptr_t start, uintptr_t end)
{
    static uint64_t entries[1024];
    uint64_t present = 0;
    for (uintptr_t page = start / PAGE_SIZE, last = page_up(end) / PAGE_SIZE; page < last;) {
        size_t want = last - page < 1024 ? last - page : 1024;
        ssize_t got = pread(fd, entries, want * sizeof *entries, (off_t)(page * sizeof *entries));
        if (got <= 0) break;
        size_t n = (size_t)got / sizeof *entries;
        for (size_t i = 0; i < n; i++) present += entries[i] >> 63;
        page += n;
    }
    return present * PAGE_SIZE;
}

/* Every row's rss measured now, and the totals (u may be NULL). Under
 * maps_mutex. */
static void measure(struct maps_usage *u)
{
    int fd = mp_kept_fd(KEPT_PAGEMAP);     /* 8 bytes per page, bit 63: present */
    for (size_t r = 1; r < maps_nrows; r++) maps_rowtab[r].rss = 0;
    if (u) memset(u, 0, sizeof *u);
    for (size_t i = 0; i < maps_count; i++) {
        const struct mapping *m = &maps_table[i];
        uint64_t rss = fd >= 0 ? resident(fd, m->start, m->end) : 0;
        maps_rowtab[m->row].rss += rss;
        if (u) u->mapped[m->kind] += m->end - m->start, u->rss[m->kind] += rss;
    }
    if (u) u->nmap = maps_count;
}

/* ------------------------------------------------------------ readers */

void maps_usage(struct maps_usage *u)
{
    pthread_mutex_lock(&maps_mutex);
    measure(u);
    pthread_mutex_unlock(&maps_mutex);
}

size_t maps_ranges_held(struct maps_range *out, size_t max)
{
    size_t n = maps_count;
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = (struct maps_range){ maps_table[i].start, maps_table[i].end, (enum maps_kind)maps_table[i].kind };
    return n;
}

size_t maps_ranges(struct maps_range *out, size_t max)
{
    pthread_mutex_lock(&maps_mutex);
    size_t n = maps_ranges_held(out, max);
    pthread_mutex_unlock(&maps_mutex);
    return n;
}

uint64_t maps_mapped_now(void)
{
    return atomic_load_explicit(&maps_mapped_total, RELAXED);
}

size_t maps_rows(struct maps_row *out, size_t max)
{
    pthread_mutex_lock(&maps_mutex);
    measure(NULL);
    size_t n = 0;
    for (size_t r = 1; r < maps_nrows; r++) {
        const struct map_row *w = &maps_rowtab[r];
        if (!w->stack_id) continue;
        if (n < max) out[n] = (struct maps_row){ w->stack_id, w->thread_seq, w->nmap, w->mapped, w->maxmapped, w->rss };
        n++;
    }
    pthread_mutex_unlock(&maps_mutex);
    return n;
}
