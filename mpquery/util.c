/* Small containers and helpers used by every mpquery file: checked
 * allocation (the only place besides main that exits: out of memory is not
 * recoverable), string buffers, a string arena, a uint64→uint32 hash map, a
 * string interning table, demangling and bounded top-k selection.
 * Hash tables keep their load factor below 1/2 and grow by doubling. */
#include "mpquery.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A size of 0 asks for 1 byte: NULL then always means out of memory, and
 * callers need no special case for empty tables. */
static void *checked(void *p)
{
    if (!p) { fputs("mpquery: out of memory\n", stderr); exit(EXIT_FAILED); }
    return p;
}

void *xmalloc(size_t n) { return checked(malloc(n ? n : 1)); }

void *xcalloc(size_t n, size_t size) { return checked(calloc(n ? n : 1, size ? size : 1)); }

void *xrealloc(void *p, size_t n) { return checked(realloc(p, n ? n : 1)); }

uint32_t *none_array(size_t n)
{
    uint32_t *a = xmalloc(n * sizeof *a);
    memset(a, 0xff, n * sizeof *a);
    return a;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* ---------------------------------------------------------------- strbuf */
static void sb_grow(struct strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) cap *= 2;
    sb->s = xrealloc(sb->s, cap);
    sb->cap = cap;
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
    sb_grow(sb, n);
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = 0;
}

void sb_puts(struct strbuf *sb, const char *s) { sb_add(sb, s, strlen(s)); }

void sb_putc(struct strbuf *sb, char c) { sb_add(sb, &c, 1); }

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sb_grow(sb, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void sb_free(struct strbuf *sb)
{
    free(sb->s);
    sb->s = NULL;
    sb->len = sb->cap = 0;
}

/* ---------------------------------------------------------------- arena */
struct arena_block { struct arena_block *next; size_t used, size; char data[]; };

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
    struct arena_block *b = a->head;
    if (!b || b->size - b->used < n + 1) {
        size_t size = n + 1 > (1u << 20) ? n + 1 : (1u << 20);
        b = xmalloc(sizeof *b + size);
        b->next = a->head;
        b->used = 0;
        b->size = size;
        a->head = b;
    }
    char *d = b->data + b->used;
    memcpy(d, s, n);
    d[n] = 0;
    b->used += n + 1;
    return d;
}

void arena_free(struct arena *a)
{
    while (a->head) {
        struct arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

/* ---------------------------------------------------------------- hashing */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = mix64(h ^ w);
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    return mix64(h ^ w ^ 0x5555);
}

/* ---------------------------------------------------------------- idmap */
void idmap_init(struct idmap *m, size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2) cap *= 2;
    m->cap = cap;
    m->len = 0;
    m->keys = xmalloc(cap * sizeof *m->keys);
    m->vals = none_array(cap);
}

uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = mix64(key) & mask;
    while (m->vals[i] != NONE) {
        if (m->keys[i] == key) return m->vals[i];
        i = (i + 1) & mask;
    }
    return NONE;
}

static void idmap_grow(struct idmap *m)
{
    struct idmap big;
    idmap_init(&big, m->cap);   /* twice the slots: init sizes for 2 x expected */
    for (size_t i = 0; i < m->cap; i++) {
        if (m->vals[i] == NONE) continue;
        size_t j = mix64(m->keys[i]) & (big.cap - 1);
        while (big.vals[j] != NONE) j = (j + 1) & (big.cap - 1);
        big.keys[j] = m->keys[i];
        big.vals[j] = m->vals[i];
    }
    big.len = m->len;
    idmap_free(m);
    *m = big;
}

void idmap_reserve(struct idmap *m, size_t more)
{
    while ((m->len + more) * 2 > m->cap) idmap_grow(m);
}

uint32_t *idmap_put(struct idmap *m, uint64_t key, int *created)
{
    if ((m->len + 1) * 2 > m->cap) idmap_grow(m);
    size_t mask = m->cap - 1, i = mix64(key) & mask;
    while (m->vals[i] != NONE) {
        if (m->keys[i] == key) { *created = 0; return &m->vals[i]; }
        i = (i + 1) & mask;
    }
    /* The caller stores a value right away; mark the slot used meanwhile. */
    m->keys[i] = key;
    m->vals[i] = NONE - 1;
    m->len++;
    *created = 1;
    return &m->vals[i];
}

void idmap_free(struct idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->len = 0;
}

/* ---------------------------------------------------------------- strtab */
void strtab_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
    t->nslots = 1024;
    t->slots = none_array(t->nslots);
}

static void strtab_rehash(struct strtab *t)
{
    size_t n = t->nslots * 2;
    uint32_t *slots = none_array(n);
    for (size_t id = 0; id < t->n; id++) {
        size_t i = t->hash[id] & (n - 1);
        while (slots[i] != NONE) i = (i + 1) & (n - 1);
        slots[i] = (uint32_t)id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
    uint64_t h = hash_bytes(s, len);
    size_t mask = t->nslots - 1, i = h & mask;
    for (uint32_t id; (id = t->slots[i]) != NONE; i = (i + 1) & mask)
        if (t->hash[id] == h && t->len[id] == len && !memcmp(t->str[id], s, len))
            return id;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->str = xrealloc(t->str, t->cap * sizeof *t->str);
        t->len = xrealloc(t->len, t->cap * sizeof *t->len);
        t->hash = xrealloc(t->hash, t->cap * sizeof *t->hash);
    }
    uint32_t id = (uint32_t)t->n++;
    t->str[id] = arena_strndup(&t->text, s, len);
    t->len[id] = (uint32_t)len;
    t->hash[id] = h;
    t->slots[i] = id;
    if (t->n * 2 > t->nslots) strtab_rehash(t);
    return id;
}

uint32_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
    uint64_t h = hash_bytes(s, len);
    size_t mask = t->nslots - 1, i = h & mask;
    for (uint32_t id; (id = t->slots[i]) != NONE; i = (i + 1) & mask)
        if (t->hash[id] == h && t->len[id] == len && !memcmp(t->str[id], s, len))
            return id;
    return NONE;
}

void strtab_free(struct strtab *t)
{
    free(t->str);
    free(t->len);
    free(t->hash);
    free(t->slots);
    arena_free(&t->text);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- misc */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *demangle(const char *name)
{
    if (name[0] != '_' || name[1] != 'Z') return NULL;
    int status = 0;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) { free(d); return NULL; }
    return d;
}

const char *path_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

char *exe_dir(void)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (!slash) return NULL;
    *slash = 0;
    return xstrdup(buf[0] ? buf : "/");
}

int parse_int64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------- top-k */
/* Min-heap on "best first" order: the root is the worst of the kept items. */
static void heap_down(uint32_t *h, size_t n, size_t i,
                      int (*cmp)(uint32_t, uint32_t, void *), void *ctx)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && cmp(h[l], h[w], ctx) > 0) w = l;
        if (r < n && cmp(h[r], h[w], ctx) > 0) w = r;
        if (w == i) return;
        uint32_t x = h[i]; h[i] = h[w]; h[w] = x;
        i = w;
    }
}

struct sort_ctx { int (*cmp)(uint32_t, uint32_t, void *); void *ctx; };

static int sort_cmp(const void *a, const void *b, void *c)
{
    const struct sort_ctx *sc = c;
    return sc->cmp(*(const uint32_t *)a, *(const uint32_t *)b, sc->ctx);
}

size_t select_top(uint32_t *items, size_t n, size_t k,
                  int (*cmp)(uint32_t, uint32_t, void *), void *ctx)
{
    struct sort_ctx sc = { cmp, ctx };
    if (k == 0 || k > n) k = n;
    if (k < n) {
        /* cmp(a, b) < 0 means a is better; the heap keeps the worst on top. */
        for (size_t i = k / 2; i-- > 0;) heap_down(items, k, i, cmp, ctx);
        for (size_t i = k; i < n; i++) {
            if (cmp(items[i], items[0], ctx) < 0) {
                items[0] = items[i];
                heap_down(items, k, 0, cmp, ctx);
            }
        }
    }
    qsort_r(items, k, sizeof *items, sort_cmp, &sc);
    return k;
}

double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void *array_grow(void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return arr;
    size_t old = *cap;
    while (*cap <= n) *cap = *cap ? 2 * *cap : 256;
    arr = xrealloc(arr, *cap * size);
    memset((char *)arr + old * size, 0, (*cap - old) * size);
    return arr;
}

void *array_push(void **arr, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *arr = xrealloc(*arr, *cap * size);
    }
    return memset((char *)*arr + (*n)++ * size, 0, size);
}
