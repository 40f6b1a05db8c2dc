/* mpquery's top-N selection (util.c: select_top, which top, diff, leaks and
 * report use for -n N): the k best items, best first, in the order a full
 * sort would give, with k = 0 or k >= n meaning all of them; exact on small
 * lists (ties broken by the comparison), against qsort on 100,000. */
#include "mpquery.h"
#include "check.h"

/* The commands' order: the larger value first, ties by the smaller index. */
static int by_value(uint32_t a, uint32_t b, void *ctx)
{
    const int64_t *v = ctx;
    if (v[a] != v[b]) return v[a] > v[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int by_value_q(const void *a, const void *b, void *ctx)
{
    return by_value(*(const uint32_t *)a, *(const uint32_t *)b, ctx);
}

static const int64_t V[10] = { 5, 3, 9, 1, 9, 7, 2, 8, 6, 4 };

/* select_top(identity of n, k) == expected[0..want) */
static void check_top(size_t n, size_t k, const uint32_t *expected, size_t want)
{
    uint32_t items[10];
    for (uint32_t i = 0; i < n; i++) items[i] = i;
    CHECK_EQ(select_top(items, n, k, by_value, (void *)V), want);
    for (size_t i = 0; i < want; i++) CHECK_EQ(items[i], expected[i]);
}

static void test_small(void)
{
    static const uint32_t all[10] = { 2, 4, 7, 5, 8, 0, 9, 1, 6, 3 };
    check_top(10, 3, all, 3);
    check_top(10, 1, all, 1);
    check_top(10, 9, all, 9);
    check_top(10, 10, all, 10);
    check_top(10, 0, all, 10);      /* -n 0: all */
    check_top(10, 50, all, 10);
    check_top(0, 5, all, 0);
    static const uint32_t first4[4] = { 2, 0, 1, 3 };   /* 9, 5, 3, 1 */
    check_top(4, 2, first4, 2);
    OK("values 5 3 9 1 9 7 2 8 6 4: top 3 = items 2 4 7 (9, 9, 8); k 0 or >= n = all, sorted");
}

static void test_subset(void)
{
    uint32_t items[4] = { 9, 0, 5, 3 };     /* values 4, 5, 7, 1 */
    CHECK_EQ(select_top(items, 4, 2, by_value, (void *)V), 2);
    CHECK_EQ(items[0], 5);
    CHECK_EQ(items[1], 0);
    OK("items are indexes of any subset: {9, 0, 5, 3} top 2 = 5, 0");
}

static void test_large(void)
{
    enum { N = 100000 };
    int64_t *v = xmalloc(N * sizeof *v);
    uint32_t *items = xmalloc(N * sizeof *items), *sorted = xmalloc(N * sizeof *sorted);
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;       /* xorshift64 */
        v[i] = (int64_t)(x % 5000);                     /* many ties */
        sorted[i] = i;
    }
    qsort_r(sorted, N, sizeof *sorted, by_value_q, v);
    static const size_t ks[] = { 1, 10, 100, 4999, N - 1 };
    for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
        for (uint32_t i = 0; i < N; i++) items[i] = N - 1 - i;
        CHECK_EQ(select_top(items, N, ks[t], by_value, v), ks[t]);
        for (size_t i = 0; i < ks[t]; i++) CHECK_EQ(items[i], sorted[i]);
    }
    free(v);
    free(items);
    free(sorted);
    OK("100,000 values with ties, k = 1, 10, 100, 4999, n - 1: the first k of a full sort");
}

int main(void)
{
    test_small();
    test_subset();
    test_large();
    return 0;
}
