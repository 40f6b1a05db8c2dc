/* Hashes shared by both programs (the recorder and mpquery). */
#ifndef MP_HASH_H
#define MP_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Fibonacci hashing: the top `bits` bits of x times 2^64 / phi. */
static inline uint64_t fib_hash(uint64_t x, unsigned bits)
{
    return (x * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

/* FNV-1a over len bytes, or over a NUL-terminated string when len is
 * FNV_STRING. */
#define FNV_STRING ((size_t)-1)
#define FNV_BASIS 0xcbf29ce484222325ull     /* the standard offset basis */
/* FNV-1a of what h hashed so far followed by these bytes (h = FNV_BASIS
 * to start): a hash of several pieces, as if they were one string. */
static inline uint64_t fnv1a_more(uint64_t h, const void *key, size_t len)
{
    const unsigned char *p = key;
    for (size_t i = 0; len == FNV_STRING ? p[i] != 0 : i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}
static inline uint64_t fnv1a(const void *key, size_t len) { return fnv1a_more(FNV_BASIS, key, len); }

/* The offset of a tag scope's frame (module '[tag]'): its name's hash, 48
 * bits, so that a tag's frame is the same in every process and file that
 * names it alike, and different names do not collide. */
static inline int64_t tag_offset(const char *name)
{
    return (int64_t)(fnv1a(name, FNV_STRING) & 0xffffffffffffull);
}

#endif
