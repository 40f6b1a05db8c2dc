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
static inline uint64_t fnv1a(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; len == FNV_STRING ? p[i] != 0 : i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* The offset of a tag scope's frame (module '[tag]'): its name's hash, 48
 * bits, so that a tag's frame is the same in every process and file that
 * names it alike, and different names do not collide. */
static inline int64_t tag_offset(const char *name)
{
    return (int64_t)(fnv1a(name, FNV_STRING) & 0xffffffffffffull);
}

#endif
