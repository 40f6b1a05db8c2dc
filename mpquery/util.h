/* mpquery's small containers and helpers (util.c): allocation that exits
 * on failure, growable strings, a bump allocator, an id map, interned
 * strings, bounded top-N selection; and messages (messages.c). Nothing
 * here knows the profile. */
#ifndef MPQUERY_UTIL_H
#define MPQUERY_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE         /* qsort_r, memmem, REG_STARTEND: every .c includes this first */
#endif

#include <stddef.h>
#include <stdint.h>

#define NONE UINT32_MAX            /* "no index" in uint32_t index arrays */

/* Allocation that exits on failure; a size of 0 is valid (a pointer that
 * must only be freed), so callers need no special case for empty tables. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grows *arr (of `size`-byte elements, *cap of them) by doubling until it
 * holds index n; new elements zeroed. */
void *array_grow(void *arr, size_t n, size_t *cap, size_t size);
/* A new zeroed element at the end of *arr (*n of them, room for *cap),
 * doubling from 256 when full. */
void *array_push(void **arr, size_t *n, size_t *cap, size_t size);
/* n uint32_t indexes, all NONE. */
uint32_t *none_array(size_t n);
char *xstrdup(const char *s);
/* CLOCK_MONOTONIC in seconds, for durations. */
double monotonic_seconds(void);
/* messages.c: "mpquery: ..." on stderr; returns `code` so that commands can
 * `return error(2, "%s: ...", path)`. */
int error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct strbuf { char *s; size_t len, cap; };
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct strbuf *sb);

/* Bump allocator for many small strings freed together. */
struct arena { struct arena_block *head; };
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_free(struct arena *a);

/* Open-addressing map uint64 key → uint32 value (values != NONE). */
struct idmap { uint64_t *keys; uint32_t *vals; size_t cap, len; };
void idmap_init(struct idmap *m, size_t expected);
uint32_t idmap_get(const struct idmap *m, uint64_t key);
/* Returns the value slot for key; *created = 1 when it was just added (the
 * slot then holds NONE and the caller must store a value). */
uint32_t *idmap_put(struct idmap *m, uint64_t key, int *created);
void idmap_free(struct idmap *m);
/* Makes room for `more` additional keys without growing again. */
void idmap_reserve(struct idmap *m, size_t more);

/* Interned strings: equal strings get the same dense id. */
struct strtab {
    const char **str; uint32_t *len; uint64_t *hash;
    size_t n, cap;
    uint32_t *slots; size_t nslots;
    struct arena text;
};
void strtab_init(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
uint32_t strtab_find(const struct strtab *t, const char *s, size_t len);     /* its id, or NONE */
void strtab_free(struct strtab *t);

uint64_t hash_bytes(const void *p, size_t n);
/* Demangled copy (malloc'd) of an Itanium C++ name, or NULL. */
char *demangle(const char *name);
const char *path_basename(const char *path);
/* Directory of the running executable (malloc'd), from /proc/self/exe. */
char *exe_dir(void);
/* Parses a whole decimal int64; 0 on success. */
int parse_int64(const char *s, int64_t *out);

/* Bounded selection: sorts the k best of items[0..n) (by cmp, best first)
 * into items[0..k) and returns k' = min(k, n). O(n log k). */
size_t select_top(uint32_t *items, size_t n, size_t k,
                  int (*cmp)(uint32_t, uint32_t, void *), void *ctx);

#endif
