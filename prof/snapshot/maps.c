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
#include "maps_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ the table */


pthread_mutex_t maps_mutex = PTHREAD_MUTEX_INITIALIZER;
struct mapping *maps_table;            /* sorted by start, disjoint */
size_t maps_count;
static size_t maps_cap;
struct map_row *maps_rowtab;
size_t maps_nrows = 1;
static size_t rows_cap;
static uint32_t *row_index;             /* open addressing over rows, key (stack_id, thread_seq); 0 = empty */
static uint32_t row_mask;
_Atomic uint64_t maps_mapped_total;

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
    for (uint32_t r = 1; r < maps_nrows; r++) {
        uint32_t i = row_home(maps_rowtab[r].stack_id, maps_rowtab[r].thread_seq) & (cap - 1);
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
    if ((!row_index || (maps_nrows + 1) * 4 > (size_t)(row_mask + 1) * 3) && index_grow()) return 0;
    uint32_t i = row_home(stack_id, seq) & row_mask;
    for (uint32_t r; (r = row_index[i]); i = (i + 1) & row_mask)
        if (maps_rowtab[r].stack_id == stack_id && maps_rowtab[r].thread_seq == seq) return r;
    if (grow(&maps_rowtab, &rows_cap, maps_nrows, maps_nrows + 1, sizeof *maps_rowtab)) return 0;
    maps_rowtab[maps_nrows] = (struct map_row){ .stack_id = stack_id, .thread_seq = seq };
    row_index[i] = (uint32_t)maps_nrows;
    return (uint32_t)maps_nrows++;
}

static void count(const struct mapping *m, uint64_t bytes, int add)
{
    struct map_row *r = &maps_rowtab[m->row];
    if (add) {
        r->mapped += bytes;
        if (r->mapped > r->maxmapped) r->maxmapped = r->mapped;
        atomic_fetch_add_explicit(&maps_mapped_total, bytes, RELAXED);
    } else {
        MP_ASSERT(r->mapped >= bytes);     /* a row counts its mappings' bytes */
        r->mapped -= bytes;
        atomic_fetch_sub_explicit(&maps_mapped_total, bytes, RELAXED);
    }
}

/* The first mapping that ends after addr (the table is disjoint: ends are
 * sorted too). */
static size_t first_ending_after(uintptr_t addr)
{
    size_t lo = 0, hi = maps_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (maps_table[mid].end <= addr) lo = mid + 1;
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
    while (i < maps_count && maps_table[i].start < hi) {
        struct mapping *m = &maps_table[i];
        if (m->start < lo && m->end > hi) {
            count(m, hi - lo, 0);
            if (grow(&maps_table, &maps_cap, maps_count, maps_count + 1, sizeof *maps_table)) {
                count(m, m->end - hi, 0);
                maps_table[i].end = lo;
                return;
            }
            m = &maps_table[i];
            memmove(&maps_table[i + 2], &maps_table[i + 1], (maps_count - i - 1) * sizeof *maps_table);
            maps_table[i + 1] = *m;
            maps_table[i + 1].start = hi;
            m->end = lo;
            maps_count++;
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
            memmove(&maps_table[i], &maps_table[i + 1], (maps_count - i - 1) * sizeof *maps_table);
            maps_count--;
        }
    }
}

/* A mapping [lo, hi) counted in row: whatever the table had there is gone
 * (MAP_FIXED over older mappings, or ones unmapped where the table could
 * not see it). 0: not counted (row 0: not wanted, or no memory). */
static int map_range(uintptr_t lo, uintptr_t hi, uint32_t row, enum maps_kind kind)
{
    unmap_range(lo, hi);
    if (!row || lo >= hi || grow(&maps_table, &maps_cap, maps_count, maps_count + 1, sizeof *maps_table)) return 0;
    size_t i = first_ending_after(lo);
    MP_ASSERT(i == maps_count || maps_table[i].start >= hi);      /* disjoint after unmap_range */
    memmove(&maps_table[i + 1], &maps_table[i], (maps_count - i) * sizeof *maps_table);
    maps_table[i] = (struct mapping){ lo, hi, row, kind };
    maps_count++;
    count(&maps_table[i], hi - lo, 1);
    return 1;
}

/* The mapping that holds addr (NULL: none). */
static const struct mapping *mapping_at(uintptr_t addr)
{
    size_t i = first_ending_after(addr);
    return i < maps_count && maps_table[i].start <= addr ? &maps_table[i] : NULL;
}


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
        if (flags & MAP_SHARED) return shared ? shared : (shared = maps_name_intern("anonymous shared"));
        return anon ? anon : (anon = maps_name_intern("anonymous"));
    }
    return maps_file_leaf(fd);
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
                maps_rowtab[row].nmap++;                                               \
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
        if (map_range(from, to, row, MAPS_ANON)) maps_rowtab[row].nmap++;
    } else if (to < from) {
        unmap_range(to, from);
    }
}

static uintptr_t brk_leaf(void)
{
    static uintptr_t leaf;
    return leaf ? leaf : (leaf = maps_name_intern("brk"));
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

/* ------------------------------------------------------------ fork */

void maps_lock(void) { pthread_mutex_lock(&maps_mutex); }
void maps_unlock(void) { pthread_mutex_unlock(&maps_mutex); }

/* A new process: it forgets the parent's mappings, as it does the
 * parent's heap blocks (fork.c): their munmap is an unknown range. */
void maps_after_fork_child(void)
{
    maps_count = 0;
    maps_nrows = 1;
    if (row_index) memset(row_index, 0, (size_t)(row_mask + 1) * sizeof *row_index);
    atomic_store_explicit(&maps_mapped_total, 0, RELAXED);
    pthread_mutex_unlock(&maps_mutex);
}
