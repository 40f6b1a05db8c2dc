/* The flush's node map (prof/snapshot/node_map.c): (parent, frame) → id, the stack
 * tree's and flush_rows.c's rows. Exact: every key put is found with its
 * id, a key never put is absent (0), through growth by half and with room
 * reserved ahead (node_reserve: no growth while the reserved entries go
 * in), with keys that share a home (probe chains across the table's end),
 * and after node_clear nothing is found. */
#include "unit.h"
#include "node_map.h"

#include <string.h>

#define N 50000

/* Keys spread like a stack tree's: parents below their children. */
static uint32_t parent_of(uint32_t k) { return k / 3; }
static uint32_t frame_of(uint32_t k) { return k * 2654435761u % 100003 + 1; }

int main(void)
{
    struct node_map m = { 0 };
    CHECK_EQ(node_get(&m, 1, 2), 0);
    CHECK_EQ(m.cap, 0);
    OK("an empty map holds nothing");

    for (uint32_t k = 1; k <= N; k++) {
        CHECK_EQ(node_put(&m, parent_of(k), frame_of(k), k), 0);
        CHECK(m.count * 4 <= m.cap * 3);
    }
    CHECK_EQ(m.count, N);
    for (uint32_t k = 1; k <= N; k++) CHECK_EQ(node_get(&m, parent_of(k), frame_of(k)), k);
    for (uint32_t k = 1; k <= N; k++) CHECK_EQ(node_get(&m, parent_of(k), frame_of(k) + 100003), 0);
    CHECK_EQ(node_get(&m, 0, 0), 0);
    OK("%d keys through growth: each found with its id, none invented, at most 3/4 full", N);

    /* growth by half from 4096, or straight to what is reserved */
    struct node_map g = { 0 };
    CHECK_EQ(node_put(&g, 1, 1, 1), 0);
    CHECK_EQ(g.cap, 4096);
    for (uint32_t k = 2; k <= 3072; k++) CHECK_EQ(node_put(&g, k, 1, k), 0);
    CHECK_EQ(g.cap, 4096);
    CHECK_EQ(node_put(&g, 3073, 1, 3073), 0);
    CHECK_EQ(g.cap, 6144);
    CHECK_EQ(node_reserve(&g, 100000), 0);
    CHECK_EQ(g.cap, (3073 + 100000) * 4 / 3 + 1);
    size_t cap = g.cap;
    for (uint32_t k = 3074; k < 3074 + 100000; k++) CHECK_EQ(node_put(&g, k, 1, k), 0);
    CHECK_EQ(g.cap, cap);
    for (uint32_t k = 1; k < 3074 + 100000; k++) CHECK_EQ(node_get(&g, k, 1), k);
    OK("grows by half at 3/4 (4096 → 6144); a reservation makes room once (%zu) for what it reserved", cap);

    /* many keys with one home: a probe chain that wraps at the table's end */
    struct node_map w = { 0 };
    CHECK_EQ(node_reserve(&w, 1), 0);
    uint32_t found = 0, keys[128][2];
    for (uint32_t p = 1; found < 64 && p < 50000000; p++) {
        uint64_t h = fib_hash((uint64_t)p << 32 | 7, 32);
        if ((size_t)((h * w.cap) >> 32) >= w.cap - 2) keys[found][0] = p, keys[found][1] = 7, found++;
    }
    CHECK_EQ(found, 64);
    for (uint32_t f = 1; found < 128 && f < 50000000; f++) {    /* and one parent, many frames */
        uint64_t h = fib_hash((uint64_t)5 << 32 | f, 32);
        if ((size_t)((h * w.cap) >> 32) >= w.cap - 2) keys[found][0] = 5, keys[found][1] = f, found++;
    }
    CHECK_EQ(found, 128);
    for (uint32_t i = 0; i < 128; i++) CHECK_EQ(node_put(&w, keys[i][0], keys[i][1], 1000 + i), 0);
    CHECK_EQ(w.cap, 4096);
    CHECK(w.e[0].id != 0);              /* the chain went round to the start */
    for (uint32_t i = 0; i < 128; i++) CHECK_EQ(node_get(&w, keys[i][0], keys[i][1]), 1000 + i);
    CHECK_EQ(node_get(&w, keys[63][0] + 1, 7), 0);
    OK("128 keys homed at the table's last two entries (64 parents, 64 frames of one): the chain wraps, each found");

    char why[256];
    CHECK_EQ(node_map_validate(&m, why, sizeof why), 0);
    CHECK_EQ(node_map_validate(&g, why, sizeof why), 0);
    CHECK_EQ(node_map_validate(&w, why, sizeof why), 0);
    size_t at = 0;                      /* a key of the wrapped chain, not at its home: the place before cleared */
    while (at < w.cap && !(w.e[at].id && at != (size_t)((fib_hash((uint64_t)w.e[at].parent << 32 | w.e[at].frame, 32) * w.cap) >> 32)))
        at++;
    CHECK(at < w.cap);
    size_t before = at ? at - 1 : w.cap - 1;
    struct node_entry kept = w.e[before];
    w.e[before].id = 0;
    CHECK_EQ(node_map_validate(&w, why, sizeof why), -1);
    CHECK(strstr(why, "an empty place") != NULL);
    printf("  planted a hole: %s\n", why);
    w.e[before] = kept;
    w.count--;
    CHECK_EQ(node_map_validate(&w, why, sizeof why), -1);
    printf("  planted a count: %s\n", why);
    w.count++;
    struct node_entry twice = w.e[at];
    size_t free_at = 0;
    while (w.e[free_at].id) free_at++;
    twice.id += 7;
    w.e[free_at] = twice;               /* its key again, further on (no place empty between: past the chain) */
    w.count++;
    CHECK_EQ(node_map_validate(&w, why, sizeof why), -1);
    printf("  planted a key twice: %s\n", why);
    w.e[free_at].id = 0;
    w.count--;
    CHECK_EQ(node_map_validate(&w, why, sizeof why), 0);
    OK("node_map_validate: the three maps whole; each planted break found (a hole, a count, a key twice)");

    node_clear(&m);
    node_clear(&g);
    node_clear(&w);
    CHECK(m.e == NULL && m.cap == 0 && m.count == 0);
    CHECK_EQ(node_get(&m, parent_of(1), frame_of(1)), 0);
    CHECK_EQ(node_put(&m, 5, 6, 7), 0);
    CHECK_EQ(node_get(&m, 5, 6), 7);
    node_clear(&m);
    OK("cleared: nothing found, usable again");
    return 0;
}
