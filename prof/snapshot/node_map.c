/* The node map: (u32, u32) → u32 (node_map.h), open addressing with the
 * key inline. Invariants (MP_ASSERT): at most 3/4 full, id 0 never stored,
 * a key stored once. Memory from mp_map, given back by node_clear. */
#include "node_map.h"
#include "base.h"

#include <stdio.h>
#include <string.h>

/* The stack tree's (parent, frame) → id is by far the largest dictionary (a
 * node per distinct frame position), so its entries are 12 bytes with the
 * key inline. Ids are below 2^32 (checked where they enter). The capacity
 * is any number (the home is the hash scaled to it): the table grows by
 * half, and is sized ahead for the nodes a flush is about to add, so it
 * stays between 1/2 and 3/4 full and a big first flush does not double it
 * step by step. */
static inline size_t node_home(uint32_t parent, uint32_t frame, size_t cap)
{
    uint64_t h = fib_hash((uint64_t)parent << 32 | frame, 32);
    return (size_t)((h * cap) >> 32);
}

uint32_t node_get(const struct node_map *m, uint32_t parent, uint32_t frame)
{
    if (!m->e) return 0;
    for (size_t i = node_home(parent, frame, m->cap); m->e[i].id; i = i + 1 == m->cap ? 0 : i + 1)
        if (m->e[i].parent == parent && m->e[i].frame == frame) return m->e[i].id;
    return 0;
}

/* Room for `more` entries past the current ones at 3/4 load at most. */
int node_reserve(struct node_map *m, size_t more)
{
    size_t need = m->count + more;
    if (need * 4 <= m->cap * 3) return 0;
    size_t cap = m->cap ? m->cap + m->cap / 2 : 4096;
    if (need * 4 > cap * 3) cap = need * 4 / 3 + 1;
    if (cap > UINT32_MAX) return -1;
    struct node_entry *t = mp_map(cap * sizeof *t, 0);
    if (!t) return -1;
    for (size_t i = 0; m->e && i < m->cap; i++) {
        if (!m->e[i].id) continue;
        size_t j = node_home(m->e[i].parent, m->e[i].frame, cap);
        while (t[j].id) j = j + 1 == cap ? 0 : j + 1;
        t[j] = m->e[i];
    }
    if (m->e) mp_unmap(m->e, m->cap * sizeof *m->e);
    m->e = t;
    m->cap = cap;
    return 0;
}

int node_put(struct node_map *m, uint32_t parent, uint32_t frame, uint32_t id)
{
    MP_ASSERT(id != 0 && node_get(m, parent, frame) == 0);
    if (node_reserve(m, 1)) return -1;
    size_t i = node_home(parent, frame, m->cap);
    while (m->e[i].id) i = i + 1 == m->cap ? 0 : i + 1;
    m->e[i] = (struct node_entry){ parent, frame, id };
    m->count++;
    MP_ASSERT(m->count * 4 <= m->cap * 3);
    return 0;
}

void node_clear(struct node_map *m)
{
    if (m->e) mp_unmap(m->e, m->cap * sizeof *m->e);
    memset(m, 0, sizeof *m);
}

/* The expensive level (the unit tests): the map whole, 0 or -1 with the
 * first broken invariant in why: at most 3/4 full, its count the entries
 * it holds, each reachable from its home without an empty place between
 * and found by node_get (a key stored twice is found at its first place,
 * with the other id). */
int node_map_validate(const struct node_map *m, char *why, size_t n)
{
    size_t held = 0;
    if (!m->e) return m->count ? snprintf(why, n, "count %zu without a table", m->count), -1 : 0;
    if (m->count * 4 > m->cap * 3) return snprintf(why, n, "%zu entries in %zu places (at most 3/4)", m->count, m->cap), -1;
    for (size_t i = 0; i < m->cap; i++) {
        const struct node_entry *e = &m->e[i];
        if (!e->id) continue;
        held++;
        for (size_t j = node_home(e->parent, e->frame, m->cap); j != i; j = j + 1 == m->cap ? 0 : j + 1)
            if (!m->e[j].id)
                return snprintf(why, n, "(%u, %u) at %zu: an empty place %zu before it", e->parent, e->frame, i, j), -1;
        if (node_get(m, e->parent, e->frame) != e->id)
            return snprintf(why, n, "(%u, %u) at %zu: stored twice (ids %u, %u)", e->parent, e->frame, i,
                            node_get(m, e->parent, e->frame), e->id), -1;
    }
    if (held != m->count) return snprintf(why, n, "count %zu, %zu entries held", m->count, held), -1;
    return 0;
}
