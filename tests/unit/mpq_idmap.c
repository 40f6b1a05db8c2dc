/* mpquery's id map (util.c: struct idmap, uint64 key → uint32 value), which
 * turns database ids into array indexes on load: values found by key, keys
 * never confused, 0 and UINT64_MAX valid keys, the table a power of two at
 * most half full after every put, growth and idmap_reserve keeping every
 * value. */
#include "mpquery.h"
#include "check.h"

/* A database id of the loader's kind: dense ids, and sparse ones (hashes). */
static uint64_t key_of(uint32_t i)
{
    return i % 2 ? (uint64_t)i : (uint64_t)i * 0x9E3779B97F4A7C15ull;
}

static void idmap_put_new(struct idmap *m, uint64_t key, uint32_t val)
{
    int created = -1;
    uint32_t *slot = idmap_put(m, key, &created);
    CHECK_EQ(created, 1);
    CHECK_EQ(*slot, NONE - 1);      /* marked used until the caller stores */
    *slot = val;
}

static void test_empty_and_one(void)
{
    struct idmap m;
    idmap_init(&m, 0);
    CHECK_EQ(m.cap, 16);
    CHECK_EQ(m.len, 0);
    CHECK_EQ(idmap_get(&m, 0), NONE);
    CHECK_EQ(idmap_get(&m, 42), NONE);
    idmap_put_new(&m, 42, 7);
    CHECK_EQ(idmap_get(&m, 42), 7);
    CHECK_EQ(idmap_get(&m, 43), NONE);
    int created = -1;
    uint32_t *slot = idmap_put(&m, 42, &created);
    CHECK_EQ(created, 0);
    CHECK_EQ(*slot, 7);
    CHECK_EQ(m.len, 1);
    idmap_free(&m);
    CHECK(m.keys == NULL && m.vals == NULL && m.cap == 0 && m.len == 0);
    OK("empty map: every key NONE; one key: its value, a second put finds it (created = 0)");
}

static void test_extreme_keys(void)
{
    struct idmap m;
    idmap_init(&m, 4);
    idmap_put_new(&m, 0, 100);
    idmap_put_new(&m, UINT64_MAX, 200);
    idmap_put_new(&m, (uint64_t)1 << 32, 300);     /* same low 32 bits as 0 */
    idmap_put_new(&m, 1, 0);                       /* value 0 is a value */
    CHECK_EQ(idmap_get(&m, 0), 100);
    CHECK_EQ(idmap_get(&m, UINT64_MAX), 200);
    CHECK_EQ(idmap_get(&m, (uint64_t)1 << 32), 300);
    CHECK_EQ(idmap_get(&m, 1), 0);
    CHECK_EQ(idmap_get(&m, 2), NONE);
    CHECK_EQ(m.len, 4);
    idmap_free(&m);
    OK("keys 0, 2^32, UINT64_MAX and the value 0 are ordinary");
}

static void test_growth(void)
{
    enum { N = 10000 };
    struct idmap m;
    idmap_init(&m, 0);
    for (uint32_t i = 0; i < N; i++) {
        idmap_put_new(&m, key_of(i), i);
        CHECK(m.len * 2 <= m.cap);
        CHECK_EQ(m.cap & (m.cap - 1), 0);
        if (i % 997 == 0)      /* after growing, every earlier key still there */
            for (uint32_t j = 0; j <= i; j++) CHECK_EQ(idmap_get(&m, key_of(j)), j);
    }
    CHECK_EQ(m.len, N);
    CHECK_EQ(m.cap, 32768);        /* grown at 9, 17, ... 8193 keys: 16 → 32768 */
    for (uint32_t i = 0; i < N; i++) CHECK_EQ(idmap_get(&m, key_of(i)), i);
    for (uint32_t i = N; i < 2 * N; i++) CHECK_EQ(idmap_get(&m, key_of(i)), NONE);
    idmap_free(&m);
    OK("%d keys, dense and sparse: each its own value, others NONE, table 32768 slots", N);
}

static void test_init_and_reserve(void)
{
    struct idmap m;
    idmap_init(&m, 1000);
    CHECK_EQ(m.cap, 2048);          /* the smallest power of two >= 2 x expected */
    idmap_free(&m);
    idmap_init(&m, 16);
    CHECK_EQ(m.cap, 32);
    idmap_put_new(&m, 5, 5);
    idmap_reserve(&m, 100);
    CHECK_EQ(m.cap, 256);           /* (1 + 100) x 2 <= 256 */
    CHECK_EQ(idmap_get(&m, 5), 5);
    uint64_t *keys = m.keys;
    for (uint32_t i = 0; i < 100; i++) idmap_put_new(&m, 1000 + i, i);
    CHECK(m.keys == keys);          /* no growth after the reserve */
    CHECK_EQ(m.cap, 256);
    for (uint32_t i = 0; i < 100; i++) CHECK_EQ(idmap_get(&m, 1000 + i), i);
    CHECK_EQ(idmap_get(&m, 5), 5);
    idmap_free(&m);
    OK("idmap_init sizes for the expected keys; idmap_reserve(100) then 100 puts: no growth");
}

int main(void)
{
    test_empty_and_one();
    test_extreme_keys();
    test_growth();
    test_init_and_reserve();
    return 0;
}
