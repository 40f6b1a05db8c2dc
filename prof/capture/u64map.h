/* python.c's maps of 64-bit keys (0: empty, ~0: removed) to 32-bit
 * values, open addressing, under the caller's lock (python.c's py_lock);
 * their memory is mp_map's, given back by map_free. Static: python.c's
 * alone. */
#ifndef MP_U64MAP_H
#define MP_U64MAP_H
#include "base.h"

struct u64map { uint64_t *keys; uint32_t *vals; uint32_t mask, used; };
#define REMOVED (~(uint64_t)0)

static uint32_t map_home(const struct u64map *m, uint64_t key) { return (uint32_t)fib_hash(key, 32) & m->mask; }

static uint32_t map_get(const struct u64map *m, uint64_t key)
{
    if (!m->keys) return 0;
    for (uint32_t i = map_home(m, key); m->keys[i]; i = (i + 1) & m->mask)
        if (m->keys[i] == key) return m->vals[i];
    return 0;
}

static int map_grow(struct u64map *m)
{
    uint32_t cap = m->keys ? (m->mask + 1) * 2 : 1024;
    struct u64map n = { mp_map((size_t)cap * 8, 1), mp_map((size_t)cap * 4, 1), cap - 1, 0 };
    if (!n.keys || !n.vals) return -1;
    for (uint32_t i = 0; m->keys && i <= m->mask; i++) {
        if (!m->keys[i] || m->keys[i] == REMOVED) continue;
        uint32_t j = map_home(&n, m->keys[i]);
        while (n.keys[j]) j = (j + 1) & n.mask;
        n.keys[j] = m->keys[i], n.vals[j] = m->vals[i], n.used++;
    }
    if (m->keys) mp_unmap(m->keys, (size_t)(m->mask + 1) * 8), mp_unmap(m->vals, (size_t)(m->mask + 1) * 4);
    *m = n;
    return 0;
}

static int map_put(struct u64map *m, uint64_t key, uint32_t val)
{
    if ((!m->keys || (m->used + 1) * 4 > (m->mask + 1) * 3) && map_grow(m)) return -1;
    uint32_t i = map_home(m, key);
    while (m->keys[i]) i = (i + 1) & m->mask;
    m->keys[i] = key, m->vals[i] = val, m->used++;
    return 0;
}

static void map_remove(struct u64map *m, uint64_t key)
{
    if (!m->keys) return;
    for (uint32_t i = map_home(m, key); m->keys[i]; i = (i + 1) & m->mask)
        if (m->keys[i] == key) m->keys[i] = REMOVED;
}

static void map_free(struct u64map *m)
{
    if (m->keys) mp_unmap(m->keys, (size_t)(m->mask + 1) * 8), mp_unmap(m->vals, (size_t)(m->mask + 1) * 4);
    *m = (struct u64map){ 0 };
}

#endif
