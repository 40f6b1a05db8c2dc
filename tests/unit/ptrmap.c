/* The pointer map (prof/core/ptrmap.c) on one thread: blocks round-trip their
 * (slot, size) exactly, absent addresses are not found, shards grow across
 * many resizes with exact counts and memory, colliding addresses stay apart,
 * the limits of the 12-byte entry, ptrmap_reset, ptrmap_release (a
 * detach: the memory given back), and the mode: no lock in
 * lone-thread mode, after ptrmap_share no lock in a shard the thread owns
 * and locks once another thread worked in it (the same checks run in
 * every mode). The hand-over between two threads: ptrmap_handover.c. */
#include "unit.h"
#include "ptrmap_internal.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAP ((uintptr_t)0x555555560000ull)     /* where a brk heap starts */
#define ENTRY_BYTES 12                          /* ptrmap.c: one entry */
#define NBIG 256                                /* ptrmap.c: live blocks of 4 GiB or more */

/* Takes p out of the map and checks that it held (slot, size). */
static void expect(uintptr_t p, uint32_t slot, uint64_t size)
{
    uint32_t got_slot = 0;
    uint64_t got_size = 0;
    int found = ptrmap_remove(p, &got_slot, &got_size);
    if (found != 1 || got_slot != slot || got_size != size)
        fprintf(stderr, "block %#lx: found %d, slot %u, size %llu; expected slot %u, size %llu\n",
                (unsigned long)p, found, got_slot, (unsigned long long)got_size, slot,
                (unsigned long long)size);
    CHECK_EQ(found, 1);
    CHECK_EQ(got_slot, slot);
    CHECK_EQ(got_size, size);
}

static void expect_absent(uintptr_t p)
{
    uint32_t slot;
    uint64_t size;
    int found = ptrmap_remove(p, &slot, &size);
    if (found) fprintf(stderr, "block %#lx: found (slot %u), expected absent\n", (unsigned long)p, slot);
    CHECK_EQ(found, 0);
}

/* Checks p without taking it out (takes it out and puts it back). */
static void expect_present(uintptr_t p, uint32_t slot, uint64_t size)
{
    expect(p, slot, size);
    ptrmap_insert(p, slot, size);
}

/* Values that differ from block to block: slots are never 0. */
static uint32_t slot_of(uint64_t i) { return (uint32_t)(i + 1) * 2654435761u; }
static uint64_t size_of(uint64_t i) { return i * 24 + i % 7; }

/* ---------------------------------------------------------------- mode */

/* Whether a map operation waits for its shard's lock: a child process (a
 * copy of the map with every shard lock taken: ptrmap_wipe_on_fork(0))
 * inserts and removes a block.
 * In lone-thread mode it exits at once; in locked mode it spins until it is
 * killed after 200 ms. */
static void check_mode(int expect_lone, const char *when)
{
    ptrmap_lock_all();
    pid_t pid = fork();
    if (pid == 0) {
        uint32_t slot;
        uint64_t size;
        ptrmap_insert(HEAP, 7, 9);
        _exit(ptrmap_remove(HEAP, &slot, &size) == 1 && slot == 7 && size == 9 ? 0 : 1);
    }
    ptrmap_unlock_all();
    CHECK(pid > 0);
    int status = 0, done = 0;
    for (int ms = 0; ms < (expect_lone ? 10000 : 200) && !done; ms++) {
        done = waitpid(pid, &status, WNOHANG) == pid;
        if (!done) usleep(1000);
    }
    if (!done) {
        kill(pid, SIGKILL);
        CHECK_EQ(waitpid(pid, &status, 0), pid);
    }
    CHECK_EQ(done, expect_lone);
    if (done) CHECK_EQ(status, 0);
    OK("%s: %s", when, expect_lone ? "the map takes no lock (an operation goes through every shard lock held)"
                                   : "the map locks (an operation waits for its shard's lock)");
}

/* Another thread's operation in the shard of HEAP (owned by the main
 * thread): the block it inserts is found by the main thread. */
static void *other_thread(void *arg)
{
    (void)arg;
    ptrmap_insert(HEAP + 64, 11, 12);
    return NULL;
}

static int membarrier_available(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/* ---------------------------------------------------------------- tests */

/* 10000 blocks 48 bytes apart come back with their exact values, once. */
static void test_round_trip(const char *mode)
{
    enum { N = 10000 };
    ptrmap_reset(0);
    for (uint64_t i = 0; i < N; i++) ptrmap_insert(HEAP + i * 48, slot_of(i), size_of(i));
    for (uint64_t i = 0; i < N; i++) expect(HEAP + i * 48, slot_of(i), size_of(i));
    for (uint64_t i = 0; i < N; i++) expect_absent(HEAP + i * 48);
    OK("%s: %d blocks inserted, removed with their exact (slot, size), then absent", mode, N);
}

/* Absent addresses: in a shard never used, 8 bytes next to a block, the
 * same key in the neighbouring shard, a block already removed, a block
 * inserted with slot 0 (no counter slot: not kept). */
static void test_absent(const char *mode)
{
    ptrmap_reset(0);
    uintptr_t p = HEAP + 0x1230;
    expect_absent(p);                                   /* the shard has no table yet */
    ptrmap_insert(p, 5, 100);
    expect_absent(p + 8);
    expect_absent(p - 8);
    expect_absent(p + ((uintptr_t)1 << SHARD_BITS));    /* same key, next shard */
    expect_absent(p + ((uintptr_t)1 << 24));            /* same shard and place in the page, next 16 MB */
    expect(p, 5, 100);
    expect_absent(p);
    CHECK_EQ(mp_memory_used(), 256 * ENTRY_BYTES);     /* one shard's first table */
    for (int i = 0; i < 1000; i++) ptrmap_insert(p, 0, 100);
    expect_absent(p);
    /* an address inserted again (its free was not seen): the last values win, one entry */
    for (uint32_t i = 1; i <= 1000; i++) ptrmap_insert(p, i, 100 + i);
    expect(p, 1000, 1100);
    expect_absent(p);
    CHECK_EQ(mp_memory_used(), 256 * ENTRY_BYTES);     /* neither took room: no growth */
    OK("%s: absent addresses return 0 (empty shard, +-8 bytes, next shard, next 16 MB, removed, "
       "inserted with slot 0); 1000 inserts of one address: the last values, one entry", mode);
}

/* The capacity a shard ends at after n inserts: 256 slots, grown by half
 * before an insert would pass 3/4 (ptrmap.c's file comment). */
static uint64_t shard_cap(uint64_t n)
{
    uint64_t cap = 256;
    while (n * 4 > cap * 3) cap += cap / 2;
    return cap;
}

/* 1,000,000 blocks 32 bytes apart (glibc's smallest chunk) in 64 shards
 * (15,625 each: 12 resizes), removed in another order: every block found
 * once with its values; the map's memory is, every 1000 inserts, exactly
 * the tables the growth rule gives (old tables unmapped). */
static void test_grow(void)
{
    enum { N = 1000000, SHARDS = 64, PER_PAGE = 4096 / 32 };
    ptrmap_reset(0);
    CHECK_EQ(mp_memory_used(), 0);
    uint64_t per_shard[SHARDS] = { 0 };
#define GROW_ADDR(i) (shard_page((uintptr_t)1 << 18, (unsigned)((i) / PER_PAGE % SHARDS), (i) / PER_PAGE / SHARDS) + \
                      ((uintptr_t)((i) % PER_PAGE) * 32))
    uint64_t expected_bytes = 0;
    for (uint64_t i = 0; i < N; i++) {
        ptrmap_insert(GROW_ADDR(i), slot_of(i), size_of(i));
        per_shard[i / PER_PAGE % SHARDS]++;
        if (i % 1000 == 999 || i == N - 1) {          /* the tables grow when they should */
            expected_bytes = 0;
            for (int s = 0; s < SHARDS; s++)
                if (per_shard[s]) expected_bytes += shard_cap(per_shard[s]) * ENTRY_BYTES;
            CHECK_EQ(mp_memory_used(), expected_bytes);
        }
    }
    CHECK_EQ(shard_cap(per_shard[0]), 22141);
    /* another order: i * 611953 mod N is a permutation (611953 is prime to N) */
    uint64_t removed = 0;
    for (uint64_t k = 0; k < N; k++) {
        uint64_t i = k * 611953 % N;
        if (i % 3) {
            expect(GROW_ADDR(i), slot_of(i), size_of(i));
            removed++;
        }
    }
    for (uint64_t k = 0; k < N; k++) {
        uint64_t i = (N - 1 - k) * 611953 % N;
        if (i % 3) {
            expect_absent(GROW_ADDR(i));
        } else {
            expect(GROW_ADDR(i), slot_of(i), size_of(i));
            removed++;
        }
    }
    CHECK_EQ(removed, N);
    for (uint64_t i = 0; i < N; i += 997) expect_absent(GROW_ADDR(i));
    CHECK_EQ(mp_memory_used(), expected_bytes);         /* tables do not shrink */
    OK("1000000 blocks in 64 shards (tables 256 -> 22141 slots, 12 resizes): memory every 1000 "
       "inserts = the tables of 12-byte entries grown by half at 3/4, %llu bytes at the end; removed in another order, 2/3 then the rest: "
       "1000000 found once with exact values, none after", (unsigned long long)expected_bytes);
#undef GROW_ADDR
}

/* Addresses that collide: the 512 8-byte positions of one page (pairs 8
 * bytes apart share a home slot); 8 blocks in each of 64 pages of one shard
 * (same key bits 3-11, one cluster per page); one block in each of 32
 * shards at the same key. After every removal, every block left is found. */
static void test_collisions(const char *mode)
{
    ptrmap_reset(0);
    enum { PAGES = 64, PER = 8, M = PAGES * PER };      /* M = 512, also one page's positions */
    static char gone[M];
    uintptr_t page = HEAP + 0x7000;
    memset(gone, 0, sizeof gone);
    for (uint64_t k = 0; k < M; k++) ptrmap_insert(page + k * 8, slot_of(k), size_of(k));
    for (uint64_t r = 0; r < M; r++) {
        uint64_t k = r < M / 2 ? r * 2 + 1 : (r - M / 2) * 2;     /* odd positions first */
        expect(page + k * 8, slot_of(k), size_of(k));
        gone[k] = 1;
        for (uint64_t j = 0; j < M; j++)
            if (!gone[j]) expect_present(page + j * 8, slot_of(j), size_of(j));
    }
    for (uint64_t k = 0; k < M; k++) expect_absent(page + k * 8);

    /* 64 pages of one shard (4 MiB apart, in 4 regions), 8 blocks each at the same offsets */
    unsigned shard = shard_of(HEAP + 0x3000);
#define COLL_ADDR(i) (shard_page(HEAP >> 26, shard, (i) / PER) + (uintptr_t)((i) % PER) * 64)
    memset(gone, 0, sizeof gone);
    for (uint64_t i = 0; i < M; i++) ptrmap_insert(COLL_ADDR(i), slot_of(i), size_of(i));
    for (uint64_t r = 0; r < M; r++) {
        uint64_t i = r * 37 % M;        /* 37 prime to 512 */
        expect(COLL_ADDR(i), slot_of(i), size_of(i));
        gone[i] = 1;
        for (uint64_t j = 0; j < M; j++)
            if (!gone[j]) expect_present(COLL_ADDR(j), slot_of(j), size_of(j));
    }
    for (uint64_t i = 0; i < M; i++) expect_absent(COLL_ADDR(i));
#undef COLL_ADDR

    /* the same key in 32 shards */
    for (uint64_t s = 0; s < 32; s++) ptrmap_insert(HEAP + 0x18 + (s << SHARD_BITS), (uint32_t)s + 1, s);
    for (uint64_t s = 32; s-- > 0;) expect(HEAP + 0x18 + (s << SHARD_BITS), (uint32_t)s + 1, s);
    OK("%s: collisions: 512 blocks of one page, 512 blocks of 64 pages in one shard (every block "
       "left found after each removal); one key in 32 shards, each with its own values", mode);
}

/* The 12-byte entry: addresses that are 8-byte aligned and below 2^47 are
 * kept (0 and 2^47 - 8 included); any other is not kept, said once through
 * mp_log, and its remove returns 0 without touching the aligned block next
 * to it or the block with the same low 47 bits. Sizes are exact up to
 * 2^64 - 1 (4 GiB and more in the side table, 256 of them live). */
static void test_limits(void)
{
    ptrmap_reset(0);
    int logs = unit_log_count;
    uintptr_t top = ((uintptr_t)1 << 47) - 8;
    ptrmap_insert(0, 1, 10);
    ptrmap_insert(8, 2, 20);
    ptrmap_insert(top, 3, 30);
    ptrmap_insert(HEAP, 4, 40);
    CHECK_EQ(unit_log_count, logs);
    expect(0, 1, 10);
    expect(8, 2, 20);
    expect(top, 3, 30);
    ptrmap_insert(top, 3, 30);

    ptrmap_insert(HEAP + 4, 5, 50);                     /* not 8-byte aligned */
    CHECK_EQ(unit_log_count, logs + 1);
    CHECK(strstr(unit_log_last, "warning: a block at 0x555555560004 cannot be mapped") != NULL);
    ptrmap_insert(HEAP + 1, 6, 60);
    ptrmap_insert(top + 8, 7, 70);                      /* 2^47 */
    ptrmap_insert(((uintptr_t)1 << 47) + HEAP, 8, 80);  /* HEAP's low 47 bits */
    ptrmap_insert(((uintptr_t)1 << 63) + HEAP, 9, 90);
    CHECK_EQ(unit_log_count, logs + 1);                 /* said once */
    expect_absent(HEAP + 4);
    expect_absent(HEAP + 1);
    expect_absent(top + 8);
    expect_absent(((uintptr_t)1 << 47) + HEAP);
    expect_absent(((uintptr_t)1 << 63) + HEAP);
    expect(HEAP, 4, 40);
    expect(top, 3, 30);

    static const uint64_t sizes[] = { 0, 1, 0xfffffffeull, 0xffffffffull, 0x100000000ull,
                                      (1ull << 40) + 3, UINT64_MAX };
    enum { NS = sizeof sizes / sizeof *sizes };
    for (int i = 0; i < NS; i++) ptrmap_insert(HEAP + 0x100 * (uintptr_t)i, (uint32_t)i + 1, sizes[i]);
    for (int i = 0; i < NS; i++) expect(HEAP + 0x100 * (uintptr_t)i, (uint32_t)i + 1, sizes[i]);
    for (uint64_t i = 0; i < NBIG; i++) ptrmap_insert(HEAP + i * 4096, (uint32_t)i + 1, (1ull << 32) + i * 4096);
    for (uint64_t i = NBIG; i-- > 0;) expect(HEAP + i * 4096, (uint32_t)i + 1, (1ull << 32) + i * 4096);
    for (uint64_t i = 0; i < NBIG; i++) ptrmap_insert(HEAP + i * 16, (uint32_t)i + 1, UINT64_MAX - i);
    for (uint64_t i = 0; i < NBIG; i++) expect(HEAP + i * 16, (uint32_t)i + 1, UINT64_MAX - i);
    OK("limits: 0, 8 and 2^47-8 kept; +4, +1, 2^47, 2^47+a, 2^63+a not kept (one warning naming "
       "0x555555560004), their neighbours intact; sizes 0, 1, 2^32-2, 2^32-1, 2^32, 2^40+3, 2^64-1 exact; "
       "256 live blocks of 4 GiB or more exact, twice");
}

/* A fork child (fork.c: mp_arena_after_fork_child, then ptrmap_reset(1))
 * starts with an empty map: the shards wiped by the kernel
 * (MADV_WIPEONFORK), the tables not there (MADV_DONTFORK) and not counted;
 * it then maps blocks of its own. The parent's map is intact. */
static void test_fork_child(void)
{
    ptrmap_reset(0);
    ptrmap_wipe_on_fork(1);
    for (uint64_t i = 0; i < 5000; i++) ptrmap_insert(HEAP + i * 4112, slot_of(i), size_of(i));
    ptrmap_insert(HEAP + 8, 1, 1ull << 33);
    uint64_t parent_used = mp_memory_used();
    CHECK(parent_used > 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        mp_arena_after_fork_child();
        ptrmap_reset(1);
        CHECK_EQ(mp_memory_used(), 0);
        for (uint64_t i = 0; i < 5000; i++) expect_absent(HEAP + i * 4112);
        expect_absent(HEAP + 8);
        for (uint64_t i = 0; i < 5000; i++) ptrmap_insert(HEAP + i * 4112, slot_of(i + 1), size_of(i + 1));
        for (uint64_t i = 0; i < 5000; i++) expect(HEAP + i * 4112, slot_of(i + 1), size_of(i + 1));
        CHECK(mp_memory_used() > 0);
        _exit(0);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (uint64_t i = 0; i < 5000; i++) expect(HEAP + i * 4112, slot_of(i), size_of(i));
    expect(HEAP + 8, 1, 1ull << 33);
    CHECK_EQ(mp_memory_used(), parent_used);
    ptrmap_reset(0);
    ptrmap_wipe_on_fork(0);
    OK("a fork child starts with an empty map that counts no memory and maps its own blocks; the parent's 5001 blocks intact");
}

static long rss_anon_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* ptrmap_release (a detach) forgets every block, unmaps every table and
 * gives back the shards' pages (RssAnon: 1 MiB less at least, the shards
 * alone), in the mode it found; the map works on after it. */
static void test_release(int lone, const char *mode)
{
    ptrmap_reset(0);            /* writes every shard: their pages resident */
    for (uint64_t i = 0; i < 5000; i++) ptrmap_insert(HEAP + i * 4112, slot_of(i), size_of(i));
    for (uint64_t i = 0; i < 10; i++) ptrmap_insert(HEAP + 8 + i * 4096, 1, (1ull << 33) + i);
    CHECK(mp_memory_used() > 0);
    ptrmap_wipe_on_fork(1);     /* the shards' advice taken, as in the recorder */
    long before = rss_anon_kb();
    ptrmap_release();
    long after = rss_anon_kb();
    ptrmap_wipe_on_fork(0);
    printf("  release: RssAnon %ld -> %ld kB\n", before, after);
    CHECK(before > 0 && after >= 0 && before - after >= 1024);
    CHECK_EQ(mp_memory_used(), 0);
    check_mode(lone, "after ptrmap_release");
    for (uint64_t i = 0; i < 5000; i++) expect_absent(HEAP + i * 4112);
    for (uint64_t i = 0; i < 10; i++) expect_absent(HEAP + 8 + i * 4096);
    CHECK_EQ(mp_memory_used(), 0);
    for (uint64_t i = 0; i < 5000; i++) ptrmap_insert(HEAP + i * 4112, slot_of(i + 2), size_of(i + 2));
    for (uint64_t i = 0; i < NBIG; i++) ptrmap_insert(HEAP + 24 + i * 4096, (uint32_t)i + 1, (1ull << 34) + i);
    for (uint64_t i = 0; i < 5000; i++) expect(HEAP + i * 4112, slot_of(i + 2), size_of(i + 2));
    for (uint64_t i = 0; i < NBIG; i++) expect(HEAP + 24 + i * 4096, (uint32_t)i + 1, (1ull << 34) + i);
    ptrmap_reset(0);
    OK("release (%s): 5000 blocks and 10 huge ones forgotten, profiler memory back to 0 bytes, "
       "the shards' pages given back, the mode kept, blocks and 256 huge ones inserted after it exact", mode);
}

/* ptrmap_reset forgets every block (side table included), unmaps every
 * table, and the next block that cannot be mapped is said again. */
static void test_reset(void)
{
    ptrmap_reset(0);
    for (uint64_t i = 0; i < 5000; i++) ptrmap_insert(HEAP + i * 4112, slot_of(i), size_of(i));
    for (uint64_t i = 0; i < 10; i++) ptrmap_insert(HEAP + 8 + i * 4096, 1, (1ull << 33) + i);
    CHECK(mp_memory_used() > 0);
    ptrmap_insert(HEAP + 2, 1, 1);
    int logs = unit_log_count;
    ptrmap_reset(0);
    CHECK_EQ(mp_memory_used(), 0);
    for (uint64_t i = 0; i < 5000; i++) expect_absent(HEAP + i * 4112);
    for (uint64_t i = 0; i < 10; i++) expect_absent(HEAP + 8 + i * 4096);
    CHECK_EQ(mp_memory_used(), 0);                      /* a remove maps nothing */
    /* the side table is empty: 256 new huge blocks fit */
    for (uint64_t i = 0; i < NBIG; i++) ptrmap_insert(HEAP + 16 + i * 4096, (uint32_t)i + 1, (1ull << 34) + i);
    for (uint64_t i = 0; i < NBIG; i++) expect(HEAP + 16 + i * 4096, (uint32_t)i + 1, (1ull << 34) + i);
    ptrmap_insert(HEAP + 2, 1, 1);
    CHECK_EQ(unit_log_count, logs + 1);
    for (uint64_t i = 0; i < 5000; i++) ptrmap_insert(HEAP + i * 4112, slot_of(i + 1), size_of(i + 1));
    for (uint64_t i = 0; i < 5000; i++) expect(HEAP + i * 4112, slot_of(i + 1), size_of(i + 1));
    OK("reset: 5000 blocks and 10 huge ones forgotten, profiler memory back to 0 bytes, "
       "256 new huge blocks fit, the unmappable warning said again, blocks inserted after it exact");
}

/* A shared shard becomes the owner's again after REOWN_STREAK (4096)
 * locked operations in a row by one thread, and another thread's
 * operation revokes it again. */
static void test_reown(int lone)
{
    pthread_t other;
    CHECK_EQ(pthread_create(&other, NULL, other_thread, NULL), 0);   /* the streak is the other's */
    CHECK_EQ(pthread_join(other, NULL), 0);
    expect(HEAP + 64, 11, 12);
    for (int i = 1; i < 4095; i++) expect_absent(HEAP + 128);
    check_mode(0, "after 4095 locked operations in a row by this thread in the shared shard (it locks)");
    expect_absent(HEAP + 128);
    check_mode(lone, "after the 4096th (the shard is this thread's again: no lock)");
    CHECK_EQ(pthread_create(&other, NULL, other_thread, NULL), 0);
    CHECK_EQ(pthread_join(other, NULL), 0);
    expect(HEAP + 64, 11, 12);
    check_mode(0, "after another thread's operation there (revoked again: it locks)");
}


/* ---------------------------------------------------------------- the expensive level */

/* ptrmap_validate finds the map whole after inserts and removals with
 * probe chains (190 blocks in 190 pages of one shard: 74 % full, homes
 * scattered by page), and each break planted in it: a hole in a probe
 * chain, a count off by one, an entry moved into another shard's table. */
static void test_validate(void)
{
    char why[256];
    enum { N = 190, SHARD = 5 };
    ptrmap_reset(0);
#define VADDR(i) (shard_page((uintptr_t)1 << 18, SHARD, (i)) + 64)
    for (uint64_t i = 0; i < N; i++) ptrmap_insert(VADDR(i), slot_of(i), size_of(i));
    CHECK_EQ(ptrmap_validate(why, sizeof why), 0);
    for (uint64_t i = 0; i < N; i += 3) expect(VADDR(i), slot_of(i), size_of(i));
    CHECK_EQ(ptrmap_validate(why, sizeof why), 0);
    struct shard *s = &ptrmap_shards[SHARD];
    CHECK_EQ(s->cap, 256);
    uint32_t j = 0, displaced = 0;
    for (uint32_t k = 0; k < s->cap && !displaced; k++)
        if (s->table[k].slot && home(s->table[k].key, s->cap) != k) j = k, displaced = 1;
    CHECK(displaced);
    uint32_t h = home(s->table[j].key, s->cap);
    struct entry saved = s->table[h];
    s->table[h].slot = 0;
    CHECK_EQ(ptrmap_validate(why, sizeof why), -1);
    CHECK(strstr(why, "an empty slot") != NULL);
    printf("  planted a hole: %s\n", why);
    s->table[h] = saved;
    s->count++;
    CHECK_EQ(ptrmap_validate(why, sizeof why), -1);
    CHECK(strstr(why, "count") != NULL);
    printf("  planted a count: %s\n", why);
    s->count--;
    ptrmap_init(1);                     /* the sparse mode: the filter counts each entry */
    ptrmap_reset(0);
    for (uint64_t i = 0; i < N; i++) ptrmap_insert(VADDR(i), slot_of(i), size_of(i));
    CHECK_EQ(ptrmap_validate(why, sizeof why), 0);
    uint8_t *bucket = &ptrmap_filter[fib_hash(VADDR(7) >> 4, PTRMAP_FILTER_BITS)], b = *bucket;
    *bucket = 0;
    CHECK_EQ(ptrmap_validate(why, sizeof why), -1);
    CHECK(strstr(why, "filter") != NULL);
    printf("  planted a filter bucket: %s\n", why);
    *bucket = b;
    CHECK_EQ(ptrmap_validate(why, sizeof why), 0);
    ptrmap_init(0);
    ptrmap_wipe_on_fork(0);
    OK("ptrmap_validate: whole after %d inserts and %d removals in one shard; each planted break found "
       "(a hole in a probe chain, a count; sparse: a filter bucket)", N, (N + 2) / 3);
#undef VADDR
    ptrmap_reset(0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    ptrmap_init(0);
    ptrmap_wipe_on_fork(0);         /* check_mode looks at the locks in a fork child's copy of the map */
    int lone = membarrier_available();
    if (!lone) printf("SKIP: no membarrier(PRIVATE_EXPEDITED): the map always locks, lone-thread mode untested\n");
    check_mode(lone, "after ptrmap_init");
    const char *mode = lone ? "lone-thread mode" : "locked mode";
    test_round_trip(mode);
    test_absent(mode);
    test_collisions(mode);
    test_limits();
    test_fork_child();
    test_reset();
    test_release(lone, mode);
    test_grow();
    test_validate();
    check_mode(lone, "after ptrmap_reset");
    ptrmap_share();
    check_mode(0, "after ptrmap_share");
    test_round_trip("shared mode");
    test_absent("shared mode");
    test_collisions("shared mode");
    check_mode(lone, "after ptrmap_share, in a shard this thread used (its owner: no lock)");
    pthread_t other;
    CHECK_EQ(pthread_create(&other, NULL, other_thread, NULL), 0);
    CHECK_EQ(pthread_join(other, NULL), 0);
    expect(HEAP + 64, 11, 12);
    check_mode(0, "after another thread's operation in that shard (the ownership revoked: it locks)");
    test_round_trip("shared mode, revoked");
    test_reown(lone);
    ptrmap_reset(0);
    check_mode(0, "after ptrmap_share and ptrmap_reset (a fork child keeps the parent's mode)");
    return 0;
}
