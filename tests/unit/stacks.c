/* Stack interning (prof/core/stacks.c): the same addresses give the same id,
 * stacks that share their outer frames share nodes, depths and parent links,
 * the [truncated] root node, stacks with equal hashes kept apart, 4 threads
 * interning the same 4096 stacks get one id per stack, and stacks_retire
 * renames exactly the nodes in its range, after which the same addresses
 * intern new nodes. Hashes are computed as counters.c does. Node counts are
 * checked as differences: the tree is one per process. */
#include "unit.h"

#include <pthread.h>
#include <string.h>

static uint64_t hash_of(const uintptr_t *ret_addrs, int n, unsigned flags)
{
    struct mp_hash h = MP_HASH_INIT;
    for (int i = 0; i < n; i++) hash_add(&h, ret_addrs[i]);
    return hash_final(h, n, flags);
}

static uint32_t intern(const uintptr_t *ret_addrs, int n, unsigned flags)
{
    uint32_t id = stacks_intern(ret_addrs, n, flags, hash_of(ret_addrs, n, flags));
    CHECK(id != 0);
    return id;
}

#define INTERN(flags, ...) intern((const uintptr_t[]){ __VA_ARGS__ }, \
                                  sizeof (uintptr_t[]){ __VA_ARGS__ } / sizeof (uintptr_t), flags)

/* Node id's path to the root is ret_addrs[0..n) ([truncated] above them
 * when flags say so), with depths n(+1) .. 1. */
static void check_path(uint32_t id, const uintptr_t *ret_addrs, int n, unsigned flags)
{
    uint32_t depth = (uint32_t)n + (flags & STACK_TRUNCATED ? 1 : 0);
    for (int i = 0; i < n; i++, depth--) {
        const struct mp_node *nd = stack_node(id);
        CHECK(nd != NULL);
        CHECK_EQ(nd->addr, ret_addrs[i]);
        CHECK_EQ(nd->depth, depth);
        id = nd->parent;
    }
    if (flags & STACK_TRUNCATED) {
        const struct mp_node *nd = stack_node(id);
        CHECK(nd != NULL);
        CHECK_EQ(nd->addr, ADDR_TRUNCATED);
        CHECK_EQ(nd->depth, 1);
        id = nd->parent;
    }
    CHECK_EQ(id, 0);
}

/* Every node 1..stack_node_count() exists, its parent came before it and its
 * depth is its parent's + 1; nothing outside that range. */
static void check_tree(void)
{
    uint32_t n = stack_node_count();
    CHECK(stack_node(0) == NULL);
    CHECK(stack_node(n + 1) == NULL);
    for (uint32_t id = 1; id <= n; id++) {
        const struct mp_node *nd = stack_node(id);
        CHECK(nd != NULL);
        CHECK(nd->parent < id);
        CHECK_EQ(nd->depth, nd->parent ? stack_node(nd->parent)->depth + 1 : 1);
    }
}

static void test_same_twice(void)
{
    uint32_t nodes = stack_node_count(), stacks = stacks_count();
    uintptr_t a[] = { 0x401010, 0x401200, 0x401300 }, copy[3];
    uint32_t id = intern(a, 3, 0);
    CHECK_EQ(stack_node_count(), nodes + 3);
    CHECK_EQ(stacks_count(), stacks + 1);
    check_path(id, a, 3, 0);
    memcpy(copy, a, sizeof a);
    CHECK_EQ(intern(copy, 3, 0), id);
    CHECK_EQ(intern(a, 3, 0), id);
    CHECK_EQ(stack_node_count(), nodes + 3);
    CHECK_EQ(stacks_count(), stacks + 1);
    OK("the same 3 addresses interned 3 times: one id (its leaf), 3 nodes, 1 stack");
}

/* Nodes are shared from the root: a stack costs the nodes below the frames
 * it shares with earlier stacks. */
static void test_prefix(void)
{
    enum { L1 = 0x402010, L2 = 0x402020, M2 = 0x402100, M1 = 0x402200, R = 0x402300, R2 = 0x402400 };
    uint32_t nodes = stack_node_count(), stacks = stacks_count();
    uint32_t s1 = INTERN(0, L1, M2, M1, R);
    CHECK_EQ(stack_node_count(), nodes + 4);
    uint32_t s2 = INTERN(0, L2, M2, M1, R);
    CHECK_EQ(stack_node_count(), nodes + 5);
    CHECK(s2 != s1);
    CHECK_EQ(stack_node(s2)->parent, stack_node(s1)->parent);
    check_path(s1, (uintptr_t[]){ L1, M2, M1, R }, 4, 0);
    check_path(s2, (uintptr_t[]){ L2, M2, M1, R }, 4, 0);
    /* a stack that is another's outer part: its leaf is that stack's inner node */
    uint32_t s3 = INTERN(0, M2, M1, R);
    CHECK_EQ(s3, stack_node(s1)->parent);
    CHECK_EQ(stack_node_count(), nodes + 5);
    CHECK_EQ(stacks_count(), stacks + 3);
    /* the same leaf frames under another root share nothing */
    uint32_t s4 = INTERN(0, L1, M2, M1, R2);
    CHECK_EQ(stack_node_count(), nodes + 9);
    uint32_t s5 = INTERN(0, L1);
    CHECK_EQ(stack_node_count(), nodes + 10);
    CHECK(s4 != s1 && s5 != s1 && s5 != s4);
    CHECK_EQ(stack_node(s5)->parent, 0);
    CHECK_EQ(stack_node(s5)->depth, 1);
    uint32_t s6 = INTERN(0, R, M1, M2, L1);        /* reversed: its root is s5's node */
    CHECK_EQ(stack_node_count(), nodes + 13);
    CHECK(s6 != s1);
    CHECK_EQ(stack_node(stack_node(stack_node(s6)->parent)->parent)->parent, s5);
    CHECK_EQ(stacks_count(), stacks + 6);
    CHECK_EQ(INTERN(0, L1, M2, M1, R), s1);
    CHECK_EQ(INTERN(0, M2, M1, R), s3);
    /* one address under 2000 callers: 2000 nodes, each under its own caller */
    static uint32_t under[2000];
    for (uintptr_t i = 0; i < 2000; i++) under[i] = INTERN(0, L1, 0x407000 + i * 16);
    CHECK_EQ(stack_node_count(), nodes + 13 + 4000);
    for (uintptr_t i = 0; i < 2000; i++) check_path(under[i], (uintptr_t[]){ L1, 0x407000 + i * 16 }, 2, 0);
    /* deeper than the latest path kept (2048 nodes): 2100 frames, then the
     * same under another leaf, then with a frame changed at depth 2060 */
    static uintptr_t deep[2100];
    for (int i = 0; i < 2100; i++) deep[i] = 0x408000 + (uintptr_t)i * 16;
    uint32_t base = stack_node_count();
    uint32_t d1 = intern(deep, 2100, 0);
    deep[0] = 0x409000;
    uint32_t d2 = intern(deep, 2100, 0);
    CHECK_EQ(stack_node_count(), base + 2101);
    CHECK_EQ(stack_node(d2)->parent, stack_node(d1)->parent);
    deep[2100 - 2060] = 0x409010;
    uint32_t d3 = intern(deep, 2100, 0);
    CHECK_EQ(stack_node_count(), base + 2101 + 41);      /* depths 2060 to 2100 */
    check_path(d3, deep, 2100, 0);
    deep[0] = 0x408000, deep[2100 - 2060] = 0x408000 + (2100 - 2060) * 16;
    check_path(d1, deep, 2100, 0);
    check_tree();
    OK("prefix sharing: 4-frame stack 4 nodes, a second with the same 3 outer frames +1 node "
       "(same parent), its outer 3 frames as a stack +0 (id = that parent), another root +4, "
       "a 1-frame stack +1 (parent 0, depth 1), reversed +3 (under that node), one address under 2000 "
       "callers +4000, 2100 frames +2100, another leaf +1, a frame changed at depth 2060 +41; "
       "depths and parent links exact");
}

/* A stack cut at MP_DEPTH hangs from the one [truncated] node at the root. */
static void test_truncated(void)
{
    enum { A = 0x403010, B = 0x403020, C = 0x403030 };
    uint32_t nodes = stack_node_count(), stacks = stacks_count();
    uint32_t t1 = INTERN(STACK_TRUNCATED, A, B);
    CHECK_EQ(stack_node_count(), nodes + 3);            /* [truncated], B, A */
    check_path(t1, (uintptr_t[]){ A, B }, 2, STACK_TRUNCATED);
    uint32_t truncated_node = stack_node(stack_node(t1)->parent)->parent;
    CHECK_EQ(stack_node(truncated_node)->addr, ADDR_TRUNCATED);
    uint32_t u1 = INTERN(0, A, B);
    CHECK(u1 != t1);
    CHECK_EQ(stack_node(u1)->depth, 2);
    CHECK_EQ(stack_node_count(), nodes + 5);
    uint32_t t2 = INTERN(STACK_TRUNCATED, C, B);
    CHECK_EQ(stack_node_count(), nodes + 6);
    CHECK_EQ(stack_node(t2)->parent, stack_node(t1)->parent);
    check_path(t2, (uintptr_t[]){ C, B }, 2, STACK_TRUNCATED);
    uint32_t t3 = INTERN(STACK_TRUNCATED, B);
    CHECK_EQ(t3, stack_node(t1)->parent);
    uint32_t t4 = INTERN(STACK_TRUNCATED, A, B, C);
    CHECK_EQ(stack_node(stack_node(stack_node(t4)->parent)->parent)->parent, truncated_node);
    CHECK_EQ(stack_node_count(), nodes + 9);
    CHECK_EQ(INTERN(STACK_TRUNCATED, A, B), t1);
    CHECK_EQ(INTERN(0, A, B), u1);
    CHECK_EQ(stacks_count(), stacks + 5);
    OK("truncated: [A,B] cut -> A, B, [truncated] (depth 3, one [truncated] root node shared by "
       "every cut stack); [A,B] not cut is another id (depth 2); interned again, the same ids");
}

/* The leaf index is by hash, but every candidate is compared frame by frame. */
static void test_same_hash(void)
{
    enum { P1 = 0x404010, P2 = 0x404020, Q = 0x404100, Q2 = 0x404200, N = 1600 };
    const uint64_t h = 0x123456789abcdef1ull;
    uint32_t x = stacks_intern((uintptr_t[]){ P1, Q }, 2, 0, h);
    uint32_t y = stacks_intern((uintptr_t[]){ P2, Q }, 2, 0, h);
    uint32_t z = stacks_intern((uintptr_t[]){ P1, Q2 }, 2, 0, h);  /* same leaf and depth */
    uint32_t w = stacks_intern((uintptr_t[]){ P1, Q }, 1, 0, h);    /* its leaf only */
    CHECK(x && y && z && w);
    CHECK(x != y && x != z && y != z && w != x && w != y && w != z);
    CHECK_EQ(stacks_intern((uintptr_t[]){ P1, Q }, 2, 0, h), x);
    CHECK_EQ(stacks_intern((uintptr_t[]){ P2, Q }, 2, 0, h), y);
    CHECK_EQ(stacks_intern((uintptr_t[]){ P1, Q2 }, 2, 0, h), z);
    /* [P1,Q,R] and [P1,Q] cut have the same depth and first frames: the root tells them apart */
    uint32_t longer = stacks_intern((uintptr_t[]){ P1, Q, 0x404300 }, 3, 0, h);
    uint32_t cut = stacks_intern((uintptr_t[]){ P1, Q }, 2, STACK_TRUNCATED, h);
    CHECK(cut && longer && cut != x && longer != x && cut != longer);
    CHECK_EQ(stacks_intern((uintptr_t[]){ P1, Q }, 2, STACK_TRUNCATED, h), cut);
    CHECK_EQ(stacks_intern((uintptr_t[]){ P1, Q, 0x404300 }, 3, 0, h), longer);
    /* the tree is exact whatever the hash: the same stack under another hash, the same id */
    CHECK_EQ(stacks_intern((uintptr_t[]){ P1, Q }, 2, 0, h ^ 0x100), x);
    /* 1600 stacks on one hash: one probe chain, the shard's table grown twice (1024 -> 4096) */
    static uint32_t ids[N];
    for (uintptr_t i = 0; i < N; i++) ids[i] = stacks_intern((uintptr_t[]){ 0x405000 + i, Q }, 2, 0, h);
    for (uintptr_t i = 0; i < N; i++) {
        CHECK(ids[i] != 0);
        CHECK_EQ(stack_node(ids[i])->addr, 0x405000 + i);
        CHECK_EQ(stacks_intern((uintptr_t[]){ 0x405000 + i, Q }, 2, 0, h), ids[i]);
    }
    OK("one hash for [P1,Q], [P2,Q], [P1,Q2], [P1], [P1,Q] cut, [P1,Q,R] and 1600 more: every stack its own id, "
       "found again; [P1,Q] under another hash: the same id");
}

/* ------------------------------------------------------------ threads */

#define THREADS 4
#define NSTACKS 4096
#define ROUNDS 4
#define MIDS 64
static uint32_t ids[THREADS][NSTACKS];
static pthread_barrier_t barrier;

/* Round r's stack i: its own leaf, one of 64 middle frames, the round's two
 * outer frames: 2 + 64 + 4096 nodes a round. */
static void round_stack(int r, int i, uintptr_t *a)
{
    uintptr_t base = 0x10000000 + (uintptr_t)r * 0x1000000;
    a[0] = base + 0x100000 + (uintptr_t)i * 16;
    a[1] = base + 0x10000 + (uintptr_t)(i % MIDS) * 16;
    a[2] = base + 0x20;
    a[3] = base + 0x10;
}

static void *intern_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&barrier);
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < NSTACKS; k++) {
                int i = (k * (2 * t + 1) + t * 1024) % NSTACKS;     /* an order per thread */
                uintptr_t a[4];
                round_stack(r, i, a);
                uint32_t id = intern(a, 4, 0);
                if (pass) CHECK_EQ(id, ids[t][i]);
                ids[t][i] = id;
            }
        pthread_barrier_wait(&barrier);         /* main checks the round */
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[THREADS];
    CHECK_EQ(pthread_barrier_init(&barrier, NULL, THREADS + 1), 0);
    for (int t = 0; t < THREADS; t++) CHECK_EQ(pthread_create(&th[t], NULL, intern_thread, (void *)(intptr_t)t), 0);
    static char seen[1 << 20];
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t nodes = stack_node_count(), stacks = stacks_count();
        pthread_barrier_wait(&barrier);
        pthread_barrier_wait(&barrier);
        CHECK_EQ(stack_node_count(), nodes + 2 + MIDS + NSTACKS);
        CHECK_EQ(stacks_count(), stacks + NSTACKS);
        CHECK(stack_node_count() < sizeof seen);
        memset(seen, 0, sizeof seen);
        for (int i = 0; i < NSTACKS; i++) {
            for (int t = 1; t < THREADS; t++) CHECK_EQ(ids[t][i], ids[0][i]);
            CHECK_EQ(seen[ids[0][i]], 0);
            seen[ids[0][i]] = 1;
            uintptr_t a[4];
            round_stack(r, i, a);
            check_path(ids[0][i], a, 4, 0);
        }
        pthread_barrier_wait(&barrier);
    }
    for (int t = 0; t < THREADS; t++) CHECK_EQ(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&barrier);
    check_tree();
    OK("%d threads, %d rounds of the same %d new stacks at once (each twice, in its own order): "
       "one id per stack for all threads, %d distinct ids, +%d nodes and +%d stacks a round, paths exact",
       THREADS, ROUNDS, NSTACKS, NSTACKS, 2 + MIDS + NSTACKS, NSTACKS);
}

/* ------------------------------------------------------------ retire */

#define LO ((uintptr_t)0x7f0000100000ull)
#define HI ((uintptr_t)0x7f0000200000ull)
static int renames;

static uintptr_t rename_addr(uintptr_t addr)
{
    renames++;
    return RETIRED_BASE | addr;
}

static void test_retire(void)
{
    const uintptr_t x1 = LO + 0x10, x2 = LO + 0x20, x3 = HI - 1, y1 = 0x406010, y2 = 0x406020,
                    y3 = 0x406030, r = 0x406100;
    const uintptr_t s_in[] = { x1, x2, y1, r }, s_mid[] = { y3, x3, r }, s_out[] = { y2, y1, r },
                    s_lo[] = { LO, r }, s_hi[] = { HI, r }, s_below[] = { LO - 1, r };
    uint32_t in = intern(s_in, 4, 0), mid = intern(s_mid, 3, 0), out = intern(s_out, 3, 0),
             lo = intern(s_lo, 2, 0), hi = intern(s_hi, 2, 0), below = intern(s_below, 2, 0);
    uint32_t cut = INTERN(STACK_TRUNCATED, x2, y1);
    /* the latest stack added runs through x2 and x1: the path the next new
     * stack starts from (stacks.c, last_path) holds nodes that get renamed */
    const uintptr_t s_via[] = { y3, x1, x2, y1, r };
    uint32_t via = intern(s_via, 5, 0);
    check_path(via, s_via, 5, 0);
    uint32_t n = stack_node_count(), stacks = stacks_count(), in_range = 0;
    static struct mp_node before[1 << 16];
    CHECK(n < sizeof before / sizeof *before);
    for (uint32_t id = 1; id <= n; id++) {
        before[id] = *stack_node(id);
        in_range += before[id].addr >= LO && before[id].addr < HI;
    }
    CHECK_EQ(in_range, 5);      /* x1, x2, x3, LO, and x2 under [truncated] → y1 */

    stacks_retire(LO, HI, rename_addr);
    CHECK_EQ(renames, 2 * in_range);     /* once without the tree lock, once under it */
    CHECK_EQ(stack_node_count(), n);
    for (uint32_t id = 1; id <= n; id++) {
        const struct mp_node *nd = stack_node(id);
        int renamed = before[id].addr >= LO && before[id].addr < HI;
        CHECK_EQ(nd->addr, renamed ? (RETIRED_BASE | before[id].addr) : before[id].addr);
        CHECK_EQ(nd->parent, before[id].parent);
        CHECK_EQ(nd->depth, before[id].depth);
    }
    check_path(in, (uintptr_t[]){ RETIRED_BASE | x1, RETIRED_BASE | x2, y1, r }, 4, 0);

    /* the same addresses again: new nodes from the first retired frame to
     * the leaf (the latest path's x2 and x1 not taken: renamed) */
    uint32_t in2 = intern(s_in, 4, 0);
    CHECK(in2 != in);
    CHECK_EQ(stack_node_count(), n + 2);
    CHECK_EQ(stack_node(stack_node(in2)->parent)->parent, stack_node(stack_node(in)->parent)->parent);
    check_path(in2, s_in, 4, 0);
    uint32_t mid2 = intern(s_mid, 3, 0);                /* only its middle frame retired */
    CHECK(mid2 != mid);
    CHECK_EQ(stack_node_count(), n + 4);
    check_path(mid2, s_mid, 3, 0);
    uint32_t lo2 = intern(s_lo, 2, 0);
    CHECK(lo2 != lo);
    CHECK_EQ(stack_node_count(), n + 5);
    uint32_t cut2 = INTERN(STACK_TRUNCATED, x2, y1);
    CHECK(cut2 != cut);
    check_path(cut2, (uintptr_t[]){ x2, y1 }, 2, STACK_TRUNCATED);
    CHECK_EQ(stack_node_count(), n + 6);
    CHECK_EQ(intern(s_out, 3, 0), out);
    CHECK_EQ(intern(s_hi, 2, 0), hi);
    CHECK_EQ(intern(s_below, 2, 0), below);
    CHECK_EQ(stack_node_count(), n + 6);
    CHECK_EQ(stacks_count(), stacks + 4);
    CHECK_EQ(intern(s_in, 4, 0), in2);                  /* the new ids stay */
    CHECK_EQ(stack_node(in)->addr, RETIRED_BASE | x1);  /* the old nodes keep their new names */
    check_tree();
    OK("retire [lo,hi): the latest path's renamed nodes not reused; exactly the 5 nodes in it renamed (lo in, hi and lo-1 out), parents and "
       "depths unchanged; interned again: stack with retired leaf frames +2 nodes under the same "
       "outer node, retired middle frame +2, [lo] +1, cut stack +1; stacks outside: same ids");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK_EQ(stack_node_count(), 0);
    test_same_twice();
    test_prefix();
    test_truncated();
    test_same_hash();
    check_tree();
    test_threads();
    test_retire();
    return 0;
}
