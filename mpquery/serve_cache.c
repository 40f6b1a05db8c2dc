/* mpquery serve's and report's profile, loaded once in their process and
 * again only when a database file changes (its size, time or inode: a
 * profile being written, a file replaced), so that each view (run in the
 * same process, serve_run) starts with it loaded: load_profiles hands it
 * to the view's command (load_preloaded) instead of reading the files,
 * marked shared: the commands read it and leave it (profile_free). The
 * listings built from it (listing_cache.c) are forgotten with it. Loaded
 * with every optional part (peak rows, histograms, the ledger), so that
 * each command finds what it asks for; a profile that cannot be loaded is
 * not kept, and each view then loads, and reports, by itself. */
#include "mpquery.h"
#include "hists.h"
#include "ledger.h"
#include "listing.h"
#include "load.h"
#include "serve.h"
#include "opt_groups.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALL_PARTS (PROFILE_PEAK_ROWS | PROFILE_HISTS | PROFILE_LEDGER)

static struct { struct profile *p; char *const *dbs; size_t n; struct stat *st; } cache;

static struct profile *preloaded(const struct dbfiles *f, int flags)
{
    if (!cache.p || (flags & ~ALL_PARTS) || f->n != cache.n) return NULL;
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->paths[i], cache.dbs[i])) return NULL;
    return cache.p;
}

static int same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Loads the files quietly (a view says what is wrong with them). */
static struct profile *load_quietly(char *const *dbs, size_t n)
{
    struct profile *p = NULL;
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC), saved = dup(2);
    fflush(stderr);
    if (null >= 0 && saved >= 0) dup2(null, 2);
    struct dbfiles f = { dbs, n };
    if (load_profiles(&f, ALL_PARTS, &p)) p = NULL;
    fflush(stderr);
    if (saved >= 0) dup2(saved, 2), close(saved);
    if (null >= 0) close(null);
    return p;
}

void serve_cache_refresh(char *const *dbs, size_t n)
{
    struct stat *now = xcalloc(n, sizeof *now);
    int changed = cache.st == NULL || cache.n != n;
    for (size_t i = 0; i < n; i++)
        if (stat(dbs[i], &now[i]) || (!changed && !same(&now[i], &cache.st[i]))) changed = 1;
    if (!changed) {
        free(now);
        return;
    }
    load_preloaded = NULL;
    listing_cache_clear();
    if (!listing_cache_on) {
        /* the views' large blocks (a counter per node, per label) come
         * and go: kept in the heap for the next view, not given back and
         * faulted in (zeroed) again each time */
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
    listing_cache_on = 1;
    if (cache.p) cache.p->shared = 0, profile_free(cache.p);
    free(cache.st);
    cache.st = now, cache.dbs = dbs, cache.n = n;
    cache.p = load_quietly(dbs, n);
    if (cache.p) cache.p->shared = 1, load_preloaded = preloaded;
}

const struct profile *serve_cache_profile(void) { return cache.p; }
