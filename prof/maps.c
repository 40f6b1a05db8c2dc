/* The program's own mappings: mmap, mmap64, munmap, mremap, brk and sbrk
 * as the program calls them (glibc's malloc maps its arenas and large
 * blocks with internal calls that never reach these symbols: those stay
 * heap). Each mapping made is kept in one table, [start, end) sorted and
 * disjoint, with the (stack, thread) row it counts in: nmap, mapped,
 * maxmapped, and at a snapshot rss (from /proc/self/pagemap). The stack is
 * malloc's capture below one more leaf, a pseudo return address naming the
 * kind ('anonymous', 'anonymous shared', 'brk' or the file's path), named
 * '[mmap]' at the flush (symbols.c). Invariants: the table changes only
 * under maps_mutex, held across the real call so that the table follows
 * the kernel's order; the stack is captured before, never under the lock;
 * a range the table does not know is ignored (a mapping made before the
 * profiler started, or by the profiler); errno and the return value are
 * the real call's. Off the malloc path: every call here is a system call. */
#define _GNU_SOURCE
#include "hot.h"
#include "maps.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ kind names */

/* The leaves' names, interned like tags (stacks.c): a bounded table, the
 * pseudo address MAPS_NAME_BASE + index; past the table, "(file)". */
#define MAX_MAP_NAMES 2048
#define MAP_NAME_LEN 256
static atomic_flag names_lock = ATOMIC_FLAG_INIT;
static char map_names[MAX_MAP_NAMES][MAP_NAME_LEN];
static uint64_t map_name_hash[MAX_MAP_NAMES];
static _Atomic uint32_t nnames;

static uintptr_t name_intern(const char *name)
{
    char buf[MAP_NAME_LEN];
    strncpy(buf, name, MAP_NAME_LEN - 1);
    buf[MAP_NAME_LEN - 1] = 0;
    uint64_t h = fnv1a(buf, FNV_STRING);
    spin_lock(&names_lock);
    uint32_t n = atomic_load_explicit(&nnames, RELAXED), i;
    for (i = 0; i < n; i++)
        if (map_name_hash[i] == h && !strcmp(map_names[i], buf)) break;
    if (i == n && n < MAX_MAP_NAMES) {
        memcpy(map_names[n], buf, MAP_NAME_LEN);
        map_name_hash[n] = h;
        atomic_store_explicit(&nnames, n + 1, memory_order_release);
    }
    spin_unlock(&names_lock);
    return MAPS_NAME_BASE + i;
}

const char *maps_name(uintptr_t addr)
{
    if (addr < MAPS_NAME_BASE || addr > MAPS_NAME_BASE + MAX_MAP_NAMES) return NULL;
    uint32_t i = (uint32_t)(addr - MAPS_NAME_BASE);
    return i < atomic_load_explicit(&nnames, memory_order_acquire) ? map_names[i] : "(file)";
}

/* The mapped file's path, from /proc/self/fd/N with raw system calls
 * (readlink: no allocation); "(file)" when it cannot be read. */
static uintptr_t file_leaf(int fd)
{
    char path[32] = "/proc/self/fd/", digits[12], name[MAP_NAME_LEN];
    int n = 0, at = 14;
    for (unsigned v = (unsigned)fd; n == 0 || v; v /= 10) digits[n++] = (char)('0' + v % 10);
    while (n) path[at++] = digits[--n];
    path[at] = 0;
    long len = syscall(SYS_readlinkat, AT_FDCWD, path, name, sizeof name - 1);
    if (len <= 0) return name_intern("(file)");
    name[len] = 0;
    return name_intern(name);
}

/* ------------------------------------------------------------ the table */

/* A (stack, thread) row; row 0 is unused. rss: at the latest measure. */
struct map_row { uint32_t stack_id, thread_seq; uint64_t nmap, mapped, maxmapped, rss; };
struct mapping { uintptr_t start, end; uint32_t row; uint32_t kind; };

static pthread_mutex_t maps_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct mapping *maps;            /* sorted by start, disjoint */
static size_t nmaps, maps_cap;
static struct map_row *rows;
static size_t nrows = 1, rows_cap;
static uint32_t *row_index;             /* open addressing over rows, key (stack_id, thread_seq); 0 = empty */
static uint32_t row_mask;
static _Atomic uint64_t mapped_total;

/* Grows a table of the profiler's own memory (uncapped: the counts are
 * exact or nothing) to hold `need` items of `elem` bytes. */
static int grow(void *pp, size_t *cap, size_t used, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 256;
    while (ncap < need) ncap *= 2;
    void *fresh = mp_map(ncap * elem, 0);
    if (!fresh) return -1;
    void **p = pp;
    if (*p) {
        memcpy(fresh, *p, used * elem);
        mp_unmap(*p, *cap * elem);
    }
    *p = fresh;
    *cap = ncap;
    return 0;
}

static uint32_t row_home(uint32_t stack_id, uint32_t seq)
{
    return (uint32_t)fib_hash((uint64_t)stack_id << 32 | seq, 32);
}

static int index_grow(void)
{
    uint32_t cap = row_index ? (row_mask + 1) * 2 : 1024;
    uint32_t *t = mp_map((size_t)cap * sizeof *t, 0);
    if (!t) return -1;
    for (uint32_t r = 1; r < nrows; r++) {
        uint32_t i = row_home(rows[r].stack_id, rows[r].thread_seq) & (cap - 1);
        while (t[i]) i = (i + 1) & (cap - 1);
        t[i] = r;
    }
    if (row_index) mp_unmap(row_index, (size_t)(row_mask + 1) * sizeof *t);
    row_index = t;
    row_mask = cap - 1;
    return 0;
}

/* The row of (stack, thread), made when new; 0: no memory. */
static uint32_t row_of(uint32_t stack_id, uint32_t seq)
{
    if ((!row_index || (nrows + 1) * 4 > (size_t)(row_mask + 1) * 3) && index_grow()) return 0;
    uint32_t i = row_home(stack_id, seq) & row_mask;
    for (uint32_t r; (r = row_index[i]); i = (i + 1) & row_mask)
        if (rows[r].stack_id == stack_id && rows[r].thread_seq == seq) return r;
    if (grow(&rows, &rows_cap, nrows, nrows + 1, sizeof *rows)) return 0;
    rows[nrows] = (struct map_row){ .stack_id = stack_id, .thread_seq = seq };
    row_index[i] = (uint32_t)nrows;
    return (uint32_t)nrows++;
}

static void count(const struct mapping *m, uint64_t bytes, int add)
{
    struct map_row *r = &rows[m->row];
    if (add) {
        r->mapped += bytes;
        if (r->mapped > r->maxmapped) r->maxmapped = r->mapped;
        atomic_fetch_add_explicit(&mapped_total, bytes, RELAXED);
    } else {
        MP_ASSERT(r->mapped >= bytes);     /* a row counts its mappings' bytes */
        r->mapped -= bytes;
        atomic_fetch_sub_explicit(&mapped_total, bytes, RELAXED);
    }
}

/* The first mapping that ends after addr (the table is disjoint: ends are
 * sorted too). */
static size_t first_ending_after(uintptr_t addr)
{
    size_t lo = 0, hi = nmaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (maps[mid].end <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* [lo, hi) is no longer mapped: the mappings it covers leave the table,
 * those it overlaps are trimmed, one it falls inside is split in two (no
 * memory for the second half: that half leaves the table too). */
static void unmap_range(uintptr_t lo, uintptr_t hi)
{
    size_t i = first_ending_after(lo);
    while (i < nmaps && maps[i].start < hi) {
        struct mapping *m = &maps[i];
        if (m->start < lo && m->end > hi) {
            count(m, hi - lo, 0);
            if (grow(&maps, &maps_cap, nmaps, nmaps + 1, sizeof *maps)) {
                count(m, m->end - hi, 0);
                maps[i].end = lo;
                return;
            }
            m = &maps[i];
            memmove(&maps[i + 2], &maps[i + 1], (nmaps - i - 1) * sizeof *maps);
            maps[i + 1] = *m;
            maps[i + 1].start = hi;
            m->end = lo;
            nmaps++;
            return;
        }
        if (m->start < lo) {
            count(m, m->end - lo, 0);
            m->end = lo;
            i++;
        } else if (m->end > hi) {
            count(m, hi - m->start, 0);
            m->start = hi;
            return;
        } else {
            count(m, m->end - m->start, 0);
            memmove(&maps[i], &maps[i + 1], (nmaps - i - 1) * sizeof *maps);
            nmaps--;
        }
    }
}

/* A mapping [lo, hi) counted in row: whatever the table had there is gone
 * (MAP_FIXED over older mappings, or ones unmapped where the table could
 * not see it). 0: not counted (row 0: not wanted, or no memory). */
static int map_range(uintptr_t lo, uintptr_t hi, uint32_t row, enum maps_kind kind)
{
    unmap_range(lo, hi);
    if (!row || lo >= hi || grow(&maps, &maps_cap, nmaps, nmaps + 1, sizeof *maps)) return 0;
    size_t i = first_ending_after(lo);
    MP_ASSERT(i == nmaps || maps[i].start >= hi);      /* disjoint after unmap_range */
    memmove(&maps[i + 1], &maps[i], (nmaps - i) * sizeof *maps);
    maps[i] = (struct mapping){ lo, hi, row, kind };
    nmaps++;
    count(&maps[i], hi - lo, 1);
    return 1;
}

/* The mapping that holds addr (NULL: none). */
static const struct mapping *mapping_at(uintptr_t addr)
{
    size_t i = first_ending_after(addr);
    return i < nmaps && maps[i].start <= addr ? &maps[i] : NULL;
}

static uintptr_t page_up(uintptr_t x) { return (x + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1); }

/* ------------------------------------------------------------ who maps */

/* A mapping about to be made: its row's key (the stack with the kind's
 * leaf, the thread), taken before the real call, outside the lock. Not
 * wanted: the profiler is inactive for the thread. Returns the thread
 * when wanted (the caller then takes the stack, record_stack_under), else
 * NULL. */
struct mapper { int wanted; uint32_t stack_id, seq; };

static struct mp_thread *mapper_begin(struct mapper *m)
{
    struct mp_thread *t = record_thread();
    int on = t && (t->active >= 0 ? t->active : atomic_load_explicit(&mp_active, RELAXED));
    *m = (struct mapper){ .wanted = on, .seq = on ? t->seq : 0 };
    return on ? t : NULL;
}

/* The row of a mapper's mapping (under the lock); 0: none. */
static uint32_t mapper_row(const struct mapper *m)
{
    return m->wanted ? row_of(m->stack_id, m->seq) : 0;
}

/* ------------------------------------------------------------ the real calls */

/* Before the hooks are resolved: the system calls themselves (the
 * profiler's own mappings always are: mp_sys_mmap, arena.c). */
static void *next_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *(*f)(void *, size_t, int, int, int, off_t) = __atomic_load_n(&mp_next.mmap, __ATOMIC_ACQUIRE);
    return f ? f(addr, len, prot, flags, fd, off) : mp_sys_mmap(addr, len, prot, flags, fd, off);
}

static void *next_mmap64(void *addr, size_t len, int prot, int flags, int fd, __off64_t off)
{
    void *(*f)(void *, size_t, int, int, int, __off64_t) = __atomic_load_n(&mp_next.mmap64, __ATOMIC_ACQUIRE);
    return f ? f(addr, len, prot, flags, fd, off) : mp_sys_mmap(addr, len, prot, flags, fd, (off_t)off);
}

static int next_munmap(void *addr, size_t len)
{
    int (*f)(void *, size_t) = __atomic_load_n(&mp_next.munmap, __ATOMIC_ACQUIRE);
    return f ? f(addr, len) : mp_sys_munmap(addr, len);
}

static void *next_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
    void *(*f)(void *, size_t, size_t, int, ...) = __atomic_load_n(&mp_next.mremap, __ATOMIC_ACQUIRE);
    return f ? f(old, old_size, new_size, flags, new_addr) : (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

/* glibc's own sbrk, for the time before dlsym found the next ones (brk
 * then moves the break by the difference: glibc's idea of it stays right) */
extern void *__sbrk(intptr_t increment);

static void *next_sbrk(intptr_t incr)
{
    void *(*f)(intptr_t) = __atomic_load_n(&mp_next.sbrk, __ATOMIC_ACQUIRE);
    return f ? f(incr) : __sbrk(incr);
}

static int next_brk(void *addr)
{
    int (*f)(void *) = __atomic_load_n(&mp_next.brk, __ATOMIC_ACQUIRE);
    if (f) return f(addr);
    char *now = __sbrk(0);
    return now == (void *)-1 || __sbrk((char *)addr - now) == (void *)-1 ? -1 : 0;
}

/* Recorded: the program's own call, the profiler started and MP_MMAP=1.
 * Inside the profiler (its own calls, libraries it calls, a signal
 * handler that interrupted it) the call passes straight through. */
static inline int maps_on(void)
{
    return !mp_tls.in_profiler && atomic_load_explicit(&mp_initialized, memory_order_acquire) && mp_opt.mmap;
}

/* The profiler's own mappings (libdw's, SQLite's, made while it works and
 * counts its memory) are not the program's: the ledger's 'profiler' line
 * knows them by their ranges. */
static inline void *own_mapped(void *p, size_t len)
{
    if (p != MAP_FAILED && mp_tls.in_profiler && mp_own_counting) mp_range_add(RANGES_PROFILER, p, page_up(len));
    return p;
}

/* ------------------------------------------------------------ entry points */

static uintptr_t mmap_leaf(int flags, int fd)
{
    static uintptr_t anon, shared;      /* interned once */
    if (flags & MAP_ANONYMOUS) {
        if (flags & MAP_SHARED) return shared ? shared : (shared = name_intern("anonymous shared"));
        return anon ? anon : (anon = name_intern("anonymous"));
    }
    return file_leaf(fd);
}

/* mmap and mmap64: the stack first, then the real call and the table
 * together under the lock. errno as the program left it until the real
 * call, then that call's. */
#define MMAP_BODY(next)                                                              \
    do {                                                                             \
        if (!maps_on()) return own_mapped(next(addr, len, prot, flags, fd, off), len); \
        struct mp_guard g = guard_enter(MP_INSIDE);                                  \
        struct mapper m;                                                             \
        enum maps_kind kind = flags & MAP_ANONYMOUS ? MAPS_ANON : MAPS_FILE;         \
        struct mp_thread *t = mapper_begin(&m);                                      \
        if (t) m.stack_id = record_stack_under(t, mmap_leaf(flags, fd));             \
        pthread_mutex_lock(&maps_mutex);                                             \
        guard_give_errno(&g);                                                        \
        void *p = next(addr, len, prot, flags, fd, off);                             \
        guard_keep_errno(&g);                                                        \
        if (p != MAP_FAILED) {                                                       \
            uint32_t row = mapper_row(&m);                                           \
            if (map_range((uintptr_t)p, (uintptr_t)p + page_up(len), row, kind))    \
                rows[row].nmap++;                                                    \
        }                                                                            \
        pthread_mutex_unlock(&maps_mutex);                                           \
        guard_leave(&g);                                                             \
        return p;                                                                    \
    } while (0)

MP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    MMAP_BODY(next_mmap);
}

MP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, __off64_t off)
{
    MMAP_BODY(next_mmap64);
}

MP_EXPORT int munmap(void *addr, size_t len)
{
    if (!maps_on()) {
        int rc = next_munmap(addr, len);
        if (rc == 0 && mp_tls.in_profiler && mp_own_counting) mp_range_remove(RANGES_PROFILER, addr, page_up(len));
        return rc;
    }
    struct mp_guard g = guard_enter_call();
    pthread_mutex_lock(&maps_mutex);
    int rc = next_munmap(addr, len);
    guard_keep_errno(&g);
    if (rc == 0) unmap_range((uintptr_t)addr, (uintptr_t)addr + page_up(len));
    pthread_mutex_unlock(&maps_mutex);
    guard_leave(&g);
    return rc;
}

/* The old range leaves the table (unless it stays: old_size 0 duplicates a
 * shared mapping, MREMAP_DONTUNMAP keeps it), the new one joins it in the
 * old mapping's row: a resize, not a new mapping (nmap unchanged). */
static void remapped(uintptr_t old, size_t old_size, uintptr_t p, size_t new_size, int flags)
{
    const struct mapping *m = mapping_at(old);
    uint32_t row = m ? m->row : 0;
    enum maps_kind kind = m ? (enum maps_kind)m->kind : MAPS_ANON;
#ifdef MREMAP_DONTUNMAP
    int keep = old_size == 0 || (flags & MREMAP_DONTUNMAP);
#else
    int keep = old_size == 0;
    (void)flags;
#endif
    if (!keep) unmap_range(old, old + page_up(old_size));
    map_range(p, p + page_up(new_size), row, kind);
}

MP_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (!maps_on()) return next_mremap(old, old_size, new_size, flags, new_addr);
    struct mp_guard g = guard_enter_call();
    pthread_mutex_lock(&maps_mutex);
    void *p = next_mremap(old, old_size, new_size, flags, new_addr);
    guard_keep_errno(&g);
    if (p != MAP_FAILED) remapped((uintptr_t)old, old_size, (uintptr_t)p, new_size, flags);
    pthread_mutex_unlock(&maps_mutex);
    guard_leave(&g);
    return p;
}

/* The break moved from `from` to `to` (the program's own brk or sbrk):
 * growth is a mapping of kind 'brk' (one per call), shrinking takes back
 * what the table has there. */
static void break_moved(uintptr_t from, uintptr_t to, const struct mapper *m)
{
    if (to > from) {
        uint32_t row = mapper_row(m);
        if (map_range(from, to, row, MAPS_ANON)) rows[row].nmap++;
    } else if (to < from) {
        unmap_range(to, from);
    }
}

static uintptr_t brk_leaf(void)
{
    static uintptr_t leaf;
    return leaf ? leaf : (leaf = name_intern("brk"));
}

MP_EXPORT void *sbrk(intptr_t incr)
{
    if (!maps_on() || incr == 0) return next_sbrk(incr);
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mapper m = { 0 };
    struct mp_thread *t = incr > 0 ? mapper_begin(&m) : NULL;
    if (t) m.stack_id = record_stack_under(t, brk_leaf());
    pthread_mutex_lock(&maps_mutex);
    guard_give_errno(&g);
    void *old = next_sbrk(incr);
    guard_keep_errno(&g);
    if (old != (void *)-1) break_moved((uintptr_t)old, (uintptr_t)old + (uintptr_t)incr, &m);
    pthread_mutex_unlock(&maps_mutex);
    guard_leave(&g);
    return old;
}

MP_EXPORT int brk(void *addr)
{
    if (!maps_on()) return next_brk(addr);
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mapper m;
    struct mp_thread *t = mapper_begin(&m);
    if (t) m.stack_id = record_stack_under(t, brk_leaf());
    pthread_mutex_lock(&maps_mutex);
    uintptr_t from = (uintptr_t)next_sbrk(0);
    guard_give_errno(&g);
    int rc = next_brk(addr);
    guard_keep_errno(&g);
    if (rc == 0 && from != (uintptr_t)-1) break_moved(from, (uintptr_t)addr, &m);
    pthread_mutex_unlock(&maps_mutex);
    guard_leave(&g);
    return rc;
}

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
    for (size_t r = 1; r < nrows; r++) rows[r].rss = 0;
    if (u) memset(u, 0, sizeof *u);
    for (size_t i = 0; i < nmaps; i++) {
        const struct mapping *m = &maps[i];
        uint64_t rss = fd >= 0 ? resident(fd, m->start, m->end) : 0;
        rows[m->row].rss += rss;
        if (u) u->mapped[m->kind] += m->end - m->start, u->rss[m->kind] += rss;
    }
    if (u) u->nmap = nmaps;
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
    size_t n = nmaps;
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = (struct maps_range){ maps[i].start, maps[i].end, (enum maps_kind)maps[i].kind };
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
    return atomic_load_explicit(&mapped_total, RELAXED);
}

size_t maps_rows(struct maps_row *out, size_t max)
{
    pthread_mutex_lock(&maps_mutex);
    measure(NULL);
    size_t n = 0;
    for (size_t r = 1; r < nrows; r++) {
        const struct map_row *w = &rows[r];
        if (!w->stack_id) continue;
        if (n < max) out[n] = (struct maps_row){ w->stack_id, w->thread_seq, w->nmap, w->mapped, w->maxmapped, w->rss };
        n++;
    }
    pthread_mutex_unlock(&maps_mutex);
    return n;
}

/* ------------------------------------------------------------ fork */

void maps_lock(void) { pthread_mutex_lock(&maps_mutex); }
void maps_unlock(void) { pthread_mutex_unlock(&maps_mutex); }

/* A new process: it forgets the parent's mappings, as it does the
 * parent's heap blocks (fork.c): their munmap is an unknown range. */
void maps_after_fork_child(void)
{
    nmaps = 0;
    nrows = 1;
    if (row_index) memset(row_index, 0, (size_t)(row_mask + 1) * sizeof *row_index);
    atomic_store_explicit(&mapped_total, 0, RELAXED);
    pthread_mutex_unlock(&maps_mutex);
}
