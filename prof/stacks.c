/* Interning of return-address arrays into small stack ids.
 *
 * A stack is stored once, immutable after publication, in arena memory; its
 * id indexes a chunked pointer table (readers need no lock: a chunk pointer
 * and each stack pointer are published with release stores). The intern
 * table is sharded by hash, one spin lock per shard; threads normally hit
 * their own cache (counters.c) and come here only for stacks they have not
 * seen. Tags (mp_tag_push) are pseudo return addresses above TAG_BASE. */
#include "internal.h"

#include <string.h>

#define NSHARDS 256
#define ID_CHUNK_BITS 16
#define ID_CHUNK (1u << ID_CHUNK_BITS)
#define MAX_ID_CHUNKS 4096

struct shard {
    atomic_flag lock;
    uint32_t mask, count;
    uint64_t *table;            /* (hash high 32 bits << 32) | id; 0 = empty */
} __attribute__((aligned(64)));

static struct shard shards[NSHARDS];
static _Atomic(struct mp_stack **) id_chunks[MAX_ID_CHUNKS];
static _Atomic uint32_t next_id = 1;

static inline void spin_lock(atomic_flag *l)
{
    while (atomic_flag_test_and_set_explicit(l, memory_order_acquire))
        __builtin_ia32_pause();
}

static inline void spin_unlock(atomic_flag *l)
{
    atomic_flag_clear_explicit(l, memory_order_release);
}

const struct mp_stack *stacks_get(uint32_t id)
{
    struct mp_stack **chunk = atomic_load_explicit(&id_chunks[id >> ID_CHUNK_BITS], memory_order_acquire);
    if (!chunk) return NULL;
    return __atomic_load_n(&chunk[id & (ID_CHUNK - 1)], __ATOMIC_ACQUIRE);
}

uint32_t stacks_count(void)
{
    return atomic_load_explicit(&next_id, memory_order_acquire) - 1;
}

static int same(const struct mp_stack *s, const uintptr_t *a, int n, unsigned flags, uint64_t hash)
{
    return s->hash == hash && s->depth == n && s->flags == flags &&
           !memcmp(s->ret_addrs, a, (size_t)n * sizeof *a);
}

static int publish(struct mp_stack *s)
{
    uint32_t id = atomic_fetch_add_explicit(&next_id, 1, RELAXED);
    uint32_t c = id >> ID_CHUNK_BITS;
    if (c >= MAX_ID_CHUNKS) return -1;
    struct mp_stack **chunk = atomic_load_explicit(&id_chunks[c], memory_order_acquire);
    if (!chunk) {
        struct mp_stack **fresh = arena_alloc(ID_CHUNK * sizeof *fresh, 1);
        if (!fresh) return -1;
        struct mp_stack **expected = NULL;
        if (atomic_compare_exchange_strong(&id_chunks[c], &expected, fresh)) chunk = fresh;
        else chunk = expected;     /* another thread won; the loser's chunk stays unused */
    }
    s->id = id;
    __atomic_store_n(&chunk[id & (ID_CHUNK - 1)], s, __ATOMIC_RELEASE);
    return 0;
}

static int shard_grow(struct shard *sh)
{
    uint32_t cap = sh->table ? (sh->mask + 1) * 2 : 1024;
    uint64_t *t = mp_map((size_t)cap * sizeof *t, 1);
    if (!t) return -1;
    for (uint32_t i = 0; sh->table && i <= sh->mask; i++) {
        uint64_t e = sh->table[i];
        if (!e) continue;
        uint32_t j = (uint32_t)(e >> 32) & (cap - 1);
        while (t[j]) j = (j + 1) & (cap - 1);
        t[j] = e;
    }
    if (sh->table) mp_unmap(sh->table, (size_t)(sh->mask + 1) * sizeof *t);
    sh->table = t;
    sh->mask = cap - 1;
    return 0;
}

/* runs inside malloc, on a per-thread cache miss */
uint32_t stacks_intern(const uintptr_t *ret_addrs, int n, unsigned flags, uint64_t hash)
{
    struct shard *sh = &shards[hash & (NSHARDS - 1)];
    uint32_t h32 = (uint32_t)(hash >> 32);
    uint32_t id = 0;
    spin_lock(&sh->lock);
    if ((!sh->table || (sh->count + 1) * 2 > sh->mask + 1) && shard_grow(sh) != 0)
        goto out;
    uint32_t i = h32 & sh->mask;
    for (; sh->table[i]; i = (i + 1) & sh->mask) {
        uint64_t e = sh->table[i];
        if ((uint32_t)(e >> 32) != h32) continue;
        const struct mp_stack *s = stacks_get((uint32_t)e);
        if (s && same(s, ret_addrs, n, flags, hash)) {
            id = (uint32_t)e;
            goto out;
        }
    }
    struct mp_stack *s = arena_alloc(sizeof *s + (size_t)n * sizeof *ret_addrs, 1);
    if (!s) goto out;
    s->hash = hash;
    s->depth = (uint16_t)n;
    s->flags = (uint16_t)flags;
    memcpy(s->ret_addrs, ret_addrs, (size_t)n * sizeof *ret_addrs);
    if (publish(s) != 0) goto out;
    sh->table[i] = ((uint64_t)h32 << 32) | s->id;
    sh->count++;
    id = s->id;
out:
    spin_unlock(&sh->lock);
    return id;
}

void stacks_lock_all(void)
{
    for (int i = 0; i < NSHARDS; i++) spin_lock(&shards[i].lock);
}

void stacks_unlock_all(void)
{
    for (int i = 0; i < NSHARDS; i++) spin_unlock(&shards[i].lock);
}

/* ---------------------------------------------------------------- tags */

#define MAX_TAGS 4096
#define TAG_LEN 64
static atomic_flag tag_lock = ATOMIC_FLAG_INIT;
static char tag_names[MAX_TAGS][TAG_LEN];
static _Atomic uint32_t ntags;

uintptr_t tag_intern(const char *name)
{
    char buf[TAG_LEN];
    strncpy(buf, name ? name : "(null)", TAG_LEN - 1);
    buf[TAG_LEN - 1] = 0;
    spin_lock(&tag_lock);
    uint32_t n = atomic_load_explicit(&ntags, RELAXED), i;
    for (i = 0; i < n; i++)
        if (!strcmp(tag_names[i], buf)) break;
    if (i == n && n < MAX_TAGS) {
        memcpy(tag_names[n], buf, TAG_LEN);
        atomic_store_explicit(&ntags, n + 1, memory_order_release);
    }
    spin_unlock(&tag_lock);
    return i < MAX_TAGS ? TAG_BASE + i : TAG_BASE + MAX_TAGS - 1;
}

const char *tag_name(uintptr_t addr)
{
    if (addr < TAG_BASE) return NULL;
    uint32_t i = (uint32_t)(addr - TAG_BASE);
    return i < atomic_load_explicit(&ntags, memory_order_acquire) ? tag_names[i] : "(tag)";
}
