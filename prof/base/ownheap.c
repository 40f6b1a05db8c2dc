/* The profiler's own heap: every block that this library's code, SQLite
 * (linked in) and the libraries of its namespace (ns.c hands them these
 * functions) allocate. The linker's --wrap sends this library's calls of
 * the malloc family here (__wrap_malloc ...), whatever the thread's guard
 * state and whether the library was preloaded or attached; the program's
 * calls still reach the exported entry points (interpose.c), and libc's
 * own allocations stay libc's.
 *
 * Why: blocks of the profiler's in the program's allocator change that
 * allocator for good. glibc raises its mmap and trim thresholds when a
 * large block is freed, the profiler's thread takes an arena that the
 * program's next thread inherits, and the profiler's blocks scatter among
 * the program's: after a detach a Python server held 1.3 MB more than its
 * twin (issue 40). Here the profiler's blocks live in mappings of its own
 * (mp_map: the ledger counts them as the profiler's) and a span with no
 * live block is given back.
 *
 * Blocks up to 32 KiB come from spans of one size class each (40
 * classes, 4 per power of two; a span 16 to 256 KiB); larger ones, and
 * those with an alignment above 16, are mappings of their own. A free
 * tells the profiler's blocks from the program's allocator's by the page
 * (a bit per page of the heap's mappings), then by the 16 bytes before the
 * block: a tag (its address xor a secret of the process: 0 once freed),
 * then its span (small) or 1 (large: the mapping's start and length 16
 * more bytes before). One spin lock a class; a thread that is inside
 * already (a signal handler of the recorder's), or a mapping refused (a
 * program under RLIMIT_AS), is served by the program's allocator. */
#define _GNU_SOURCE
#include "base.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#define SPAN_MIN (16u << 10)
#define SPAN_MAX (256u << 10)
#define MAX_SMALL (32u << 10)
#define NCLASS 40
#define HDR 16

struct span {
    struct span *next, *prev;   /* the class's spans with room, while listed */
    char *free;                 /* freed blocks (headers), linked through their payload */
    char *bump, *end;           /* the blocks never used */
    uint32_t used, cls;
    int listed;
};
#define SPAN_HEAD ((sizeof(struct span) + 15) & ~(size_t)15)

static struct klass {
    atomic_flag lock;
    struct span *room;          /* spans with a free block */
    unsigned nspans;            /* mapped */
} classes[NCLASS];

static _Atomic uintptr_t secret;
static MP_TLS int in_heap;

void *__real_malloc(size_t);
void __real_free(void *);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
int __real_posix_memalign(void **, size_t, size_t);
size_t __real_malloc_usable_size(void *);

static unsigned class_of(size_t n)
{
    if (n <= 128) return n ? (unsigned)((n - 1) >> 4) : 0;
    unsigned lg = 63 - (unsigned)__builtin_clzll(n - 1);
    return 8 + (lg - 7) * 4 + (unsigned)(((n - 1) >> (lg - 2)) & 3);
}

static size_t class_size(unsigned c)
{
    if (c < 8) return 16 * (size_t)(c + 1);
    unsigned lg = 7 + (c - 8) / 4;
    return ((size_t)1 << lg) + ((c - 8) % 4 + 1) * ((size_t)1 << (lg - 2));
}

static uintptr_t the_secret(void)
{
    uintptr_t s = atomic_load_explicit(&secret, memory_order_relaxed), zero = 0;
    if (likely(s)) return s;
    struct timespec t;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != sizeof s) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        s = ((uintptr_t)&t * 0x9E3779B97F4A7C15u) ^ ((uintptr_t)t.tv_nsec << 20) ^ (uintptr_t)t.tv_sec;
    }
    s |= 1;
    atomic_compare_exchange_strong(&secret, &zero, s);
    return atomic_load(&secret);
}

static inline void *tag(char *b, uintptr_t info)
{
    char *p = b + HDR;
    ((uintptr_t *)p)[-2] = the_secret() ^ (uintptr_t)p;
    ((uintptr_t *)p)[-1] = info;
    return p;
}

/* The pages of the heap's mappings, one bit each, in leaves of 4 GiB of
 * address space made as needed: whether a pointer is one of ours is asked
 * of them first, so that nothing is read of another allocator's block
 * (jemalloc's or tcmalloc's have no header: the 16 bytes before one may be
 * another mapping, or none). */
#define LEAF_SHIFT 32
#define LEAVES (1u << (47 - LEAF_SHIFT))
#define LEAF_PAGES ((size_t)1 << (LEAF_SHIFT - 12))
static _Atomic(_Atomic uint64_t *) leaves[LEAVES];

static _Atomic uint64_t *leaf_of(uintptr_t a, int make)
{
    if ((a >> LEAF_SHIFT) >= LEAVES) return NULL;
    _Atomic(_Atomic uint64_t *) *at = &leaves[a >> LEAF_SHIFT];
    _Atomic uint64_t *leaf = atomic_load_explicit(at, memory_order_acquire), *none = NULL;
    if (leaf || !make) return leaf;
    leaf = mp_sys_mmap(NULL, LEAF_PAGES / 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (leaf == MAP_FAILED) return NULL;
    if (!atomic_compare_exchange_strong(at, &none, leaf)) mp_sys_munmap((void *)leaf, LEAF_PAGES / 8), leaf = none;
    return leaf;
}

/* 0 if the pages could not be marked (no leaf to be had) */
static int pages_mark(const void *p, size_t len, int on)
{
    for (uintptr_t a = (uintptr_t)p; a < (uintptr_t)p + len; a += PAGE_SIZE) {
        _Atomic uint64_t *leaf = leaf_of(a, on);
        size_t bit = (a >> 12) & (LEAF_PAGES - 1);
        if (!leaf) return !on;
        if (on) atomic_fetch_or_explicit(&leaf[bit / 64], (uint64_t)1 << (bit % 64), memory_order_release);
        else atomic_fetch_and_explicit(&leaf[bit / 64], ~((uint64_t)1 << (bit % 64)), memory_order_release);
    }
    return 1;
}

/* One of ours: on a page of the heap's, its tag there (a freed block's is 0). */
static inline int owned(const void *p)
{
    uintptr_t a = (uintptr_t)p, s = atomic_load_explicit(&secret, memory_order_relaxed);
    _Atomic uint64_t *leaf = s ? leaf_of(a, 0) : NULL;
    size_t bit = (a >> 12) & (LEAF_PAGES - 1);
    if (!leaf || !((atomic_load_explicit(&leaf[bit / 64], memory_order_acquire) >> (bit % 64)) & 1)) return 0;
    return ((const uintptr_t *)p)[-2] == (s ^ a);
}

/* A mapping of the heap's, its pages marked; given back unmarked. */
static void *heap_map(size_t len)
{
    void *m = mp_map(len, 0);
    if (m && !pages_mark(m, len, 1)) pages_mark(m, len, 0), mp_unmap(m, len), m = NULL;
    return m;
}

static void heap_unmap(void *m, size_t len)
{
    pages_mark(m, len, 0);
    mp_unmap(m, len);
}

/* ------------------------------------------------------------ spans */

static void list_add(struct klass *k, struct span *s)
{
    s->prev = NULL;
    s->next = k->room;
    if (k->room) k->room->prev = s;
    k->room = s;
    s->listed = 1;
}

static void list_remove(struct klass *k, struct span *s)
{
    if (s->prev) s->prev->next = s->next;
    else k->room = s->next;
    if (s->next) s->next->prev = s->prev;
    s->listed = 0;
}

/* A class's first span holds 4 blocks (16 KiB at least), each next one
 * twice the last, up to 256 KiB: a class with a block or two costs little
 * address space (a program under RLIMIT_AS has little to spare). */
static struct span *span_new(struct klass *k, unsigned c)
{
    size_t first = (4 * (HDR + class_size(c)) + SPAN_HEAD + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
    size_t size = (first < SPAN_MIN ? SPAN_MIN : first) << (k->nspans < 4 ? k->nspans : 4);
    if (size > SPAN_MAX) size = first > SPAN_MAX ? first : SPAN_MAX;
    struct span *s = heap_map(size);
    if (!s) return NULL;
    k->nspans++;
    s->bump = (char *)s + SPAN_HEAD;
    s->end = (char *)s + size;
    s->cls = c;
    list_add(k, s);
    return s;
}

static void *small_alloc(size_t n)
{
    unsigned c = class_of(n);
    size_t stride = HDR + class_size(c);
    struct klass *k = &classes[c];
    spin_lock(&k->lock);
    struct span *s = k->room;
    if (!s && !(s = span_new(k, c))) {
        spin_unlock(&k->lock);
        return NULL;
    }
    char *b = s->free;
    if (b) s->free = *(char **)(b + HDR);
    else b = s->bump, s->bump += stride;
    s->used++;
    if (!s->free && (size_t)(s->end - s->bump) < stride) list_remove(k, s);
    spin_unlock(&k->lock);
    return tag(b, (uintptr_t)s);
}

/* A span with no live block goes back, unless it is the class's only one
 * with room (the next block's: no mapping per block at a low watermark). */
static void small_free(char *p, struct span *s)
{
    struct klass *k = &classes[s->cls];
    ((uintptr_t *)p)[-2] = 0;
    spin_lock(&k->lock);
    *(char **)p = s->free;
    s->free = p - HDR;
    s->used--;
    if (!s->listed) list_add(k, s);
    int release = !s->used && (k->room != s || s->next);
    if (release) list_remove(k, s), k->nspans--;
    spin_unlock(&k->lock);
    if (release) heap_unmap(s, (size_t)(s->end - (char *)s));
}

/* ------------------------------------------------------------ large blocks */

static void *large_alloc(size_t n, size_t align)
{
    if (n > ((size_t)1 << 46)) return NULL;
    size_t len = (n + 2 * HDR + (align > HDR ? align : 0) + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
    char *m = heap_map(len);
    if (!m) return NULL;
    uintptr_t at = ((uintptr_t)m + 2 * HDR + align - 1) & ~(uintptr_t)(align - 1);
    uintptr_t *w = (uintptr_t *)at;
    w[-4] = (uintptr_t)m;
    w[-3] = len;
    return tag((char *)at - HDR, 1);
}

static size_t usable(const char *p)
{
    const uintptr_t *w = (const uintptr_t *)p;
    if (w[-1] & 1) return w[-3] - ((uintptr_t)p - w[-4]);
    return class_size(((const struct span *)w[-1])->cls);
}

/* A thread inside already (a signal handler that interrupted the heap on
 * it) leaves the block where it is: its class's lock may be this thread's. */
static void own_free(char *p)
{
    uintptr_t *w = (uintptr_t *)p;
    if (unlikely(in_heap)) return;
    in_heap = 1;
    if (!(w[-1] & 1)) small_free(p, (struct span *)w[-1]);
    else w[-2] = 0, heap_unmap((void *)w[-4], w[-3]);
    in_heap = 0;
}

/* NULL: the thread is inside already, or no mapping was to be had (a
 * program under RLIMIT_AS): the caller falls back to the program's
 * allocator, whose free blocks may still serve it (free tells the blocks
 * apart by their tag). */
static void *own_alloc(size_t n, size_t align)
{
    if (unlikely(in_heap)) return NULL;
    in_heap = 1;
    void *p = align <= HDR && n <= MAX_SMALL ? small_alloc(n) : large_alloc(n, align);
    in_heap = 0;
    return p;
}

/* ------------------------------------------------------------ the wrapped family */

void *__wrap_malloc(size_t n)
{
    void *p = own_alloc(n, HDR);
    return p ? p : __real_malloc(n);
}

void __wrap_free(void *p)
{
    if (!p) return;
    if (owned(p)) own_free(p);
    else __real_free(p);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = own_alloc(n * size, HDR);
    if (!p) return __real_calloc(n, size);
    if (n * size <= MAX_SMALL) memset(p, 0, n * size);     /* a new mapping is zero */
    return p;
}

void *__wrap_realloc(void *old, size_t n)
{
    if (!old) return __wrap_malloc(n);
    if (!owned(old)) return __real_realloc(old, n);
    if (!n) {
        own_free(old);
        return NULL;
    }
    size_t have = usable(old);
    if (n <= have && (n > MAX_SMALL || class_of(n) == class_of(have)) && n > have / 2) return old;
    void *p = own_alloc(n, HDR);
    if (!p && !(p = __real_malloc(n))) return NULL;
    memcpy(p, old, have < n ? have : n);
    own_free(old);
    return p;
}

void *__wrap_reallocarray(void *old, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_realloc(old, n * size);
}

int __wrap_posix_memalign(void **out, size_t align, size_t n)
{
    if (!align || (align & (align - 1)) || align % sizeof(void *)) return EINVAL;
    void *p = own_alloc(n, align);
    if (!p) return __real_posix_memalign(out, align, n);
    *out = p;
    return 0;
}

void *__wrap_memalign(size_t align, size_t n)
{
    void *p = NULL;
    int rc = __wrap_posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n);
    if (rc) errno = rc;
    return p;
}

void *__wrap_aligned_alloc(size_t align, size_t n) { return __wrap_memalign(align, n); }

size_t __wrap_malloc_usable_size(void *p)
{
    if (!p) return 0;
    return owned(p) ? usable(p) : __real_malloc_usable_size(p);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = __wrap_malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *p = __wrap_malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* ------------------------------------------------------------ fork, detach */

/* fork.c: no span list is mid-change in the child. */
void ownheap_lock_all(void)
{
    for (unsigned c = 0; c < NCLASS; c++) spin_lock(&classes[c].lock);
}

void ownheap_unlock_all(void)
{
    for (unsigned c = NCLASS; c-- > 0;) spin_unlock(&classes[c].lock);
}

/* A span that keeps live blocks: the free blocks above its last live one
 * become never used again (the bump pointer comes down to it) and their
 * pages go back; the free list is made anew from the free blocks below it
 * (a free block's tag is 0). */
static void span_shrink(struct span *s, size_t stride)
{
    char *first = (char *)s + SPAN_HEAD, *top = first;
    for (char *b = first; b < s->bump; b += stride)
        if (owned(b + HDR)) top = b + stride;
    s->free = NULL;
    for (char *b = top; b > first;) {
        b -= stride;
        if (!owned(b + HDR)) *(char **)(b + HDR) = s->free, s->free = b;
    }
    s->bump = top;
    char *from = (char *)(((uintptr_t)top + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1));
    if (from < s->end) madvise(from, (size_t)(s->end - from), MADV_DONTNEED);
}

/* The end of an attach session: the spans with no live block go back, the
 * others' pages above their last live block. */
void ownheap_trim(void)
{
    for (unsigned c = 0; c < NCLASS; c++) {
        struct klass *k = &classes[c];
        spin_lock(&k->lock);
        struct span *s = k->room;
        while (s) {
            struct span *next = s->next;
            if (!s->used) list_remove(k, s), k->nspans--, heap_unmap(s, (size_t)(s->end - (char *)s));
            else span_shrink(s, HDR + class_size(c));
            s = next;
        }
        spin_unlock(&k->lock);
    }
}
