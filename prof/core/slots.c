/* Counter slots: one per (stack, allocating thread), in chunks that are
 * never freed, each slot beside its side fields and its copy as at the
 * peak. A slot belongs to the thread that made it (thread_seq): only that
 * thread writes its owner fields. Each thread maps its stack ids to its
 * slots (open addressing, key stack_id). */
#include "hot.h"

#include <stdio.h>
#include <string.h>

/* the chunks, by index (slot_at, slot_side: record.h) */
struct mp_slot *_Atomic mp_slot_chunks[MAX_SLOT_CHUNKS];
static _Atomic uint32_t slot_chunks_used;

/* A chunk is SLOT_CHUNK slots, then their sides, then their values as at
 * the peak: every slot has its peak copy from its creation, so that a
 * slot made after the latest capture reads as zeros there (its epoch is
 * the current one and its copy was never written). */
#define SLOT_CHUNK_BYTES (SLOT_CHUNK * (sizeof(struct mp_slot) + sizeof(struct mp_slot_side) + sizeof(struct slot_raw)))

struct slot_raw *slot_peak(uint32_t idx)
{
    struct mp_slot *chunk = atomic_load_explicit(&mp_slot_chunks[idx / SLOT_CHUNK], memory_order_acquire);
    if (!chunk) return NULL;
    struct mp_slot_side *sides = (struct mp_slot_side *)(chunk + SLOT_CHUNK);
    return (struct slot_raw *)(sides + SLOT_CHUNK) + idx % SLOT_CHUNK;
}

uint32_t slot_limit(void)
{
    return atomic_load_explicit(&slot_chunks_used, memory_order_acquire) * SLOT_CHUNK;
}

/* A new slot for (stack_id, t), from the thread's current chunk. 0 = none. */
uint32_t slot_new(struct mp_thread *t, uint32_t stack_id)
{
    if (t->slot_next == t->slot_end) {
        uint32_t c = atomic_fetch_add_explicit(&slot_chunks_used, 1, RELAXED);
        if (c >= MAX_SLOT_CHUNKS) return 0;
        struct mp_slot *chunk = arena_alloc(SLOT_CHUNK_BYTES, stack_id != 0);
        if (!chunk) return 0;
        atomic_store_explicit(&mp_slot_chunks[c], chunk, memory_order_release);
        t->slot_next = c * SLOT_CHUNK + (c == 0);   /* slot 0 means "none" */
        t->slot_end = (c + 1) * SLOT_CHUNK;
    }
    uint32_t idx = t->slot_next++;
    struct mp_slot *s = slot_at(idx);
    MP_ASSERT(idx != 0 && s && !s->thread_seq);     /* a fresh slot of the thread's own chunk */
    s->stack_id = stack_id;
    peak_slot_born(s);
    STORE(s->thread_seq, (uint16_t)t->seq);
    return idx;
}

static int slot_map_grow(struct mp_thread *t)
{
    uint32_t cap = t->slot_keys ? (t->slot_mask + 1) * 2 : 256;
    uint32_t *keys = mp_map((size_t)cap * 8, 1);
    if (!keys) return -1;
    uint32_t *vals = keys + cap;
    for (uint32_t i = 0; t->slot_keys && i <= t->slot_mask; i++) {
        uint32_t k = t->slot_keys[i];
        if (!k) continue;
        uint32_t j = (uint32_t)fib_hash(k, 32) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = k;
        vals[j] = t->slot_vals[i];
    }
    if (t->slot_keys) mp_unmap(t->slot_keys, (size_t)(t->slot_mask + 1) * 8);
    t->slot_keys = keys;
    t->slot_vals = vals;
    t->slot_mask = cap - 1;
    return 0;
}

/* The thread's slot for a stack, created on first use. 0 = out of memory. */
uint32_t slot_of_stack(struct mp_thread *t, uint32_t stack_id)
{
    if ((!t->slot_keys || (t->slot_count + 1) * 4 > (t->slot_mask + 1) * 3) && slot_map_grow(t))
        return 0;
    uint32_t i = (uint32_t)fib_hash(stack_id, 32) & t->slot_mask;
    for (; t->slot_keys[i]; i = (i + 1) & t->slot_mask)
        if (t->slot_keys[i] == stack_id) {
            MP_ASSERT(slot_at(t->slot_vals[i])->thread_seq == t->seq && slot_at(t->slot_vals[i])->stack_id == stack_id);
            return t->slot_vals[i];
        }
    uint32_t slot = slot_new(t, stack_id);
    if (slot) {
        t->slot_keys[i] = stack_id;
        t->slot_vals[i] = slot;
        t->slot_count++;
    }
    return slot;
}

/* A fork child starts with empty counters: each slot keeps its stack and
 * its owner, and its side and its peak copy are zeros again. */
void slots_after_fork_child(void)
{
    uint32_t limit = slot_limit();
    for (uint32_t i = 1; i < limit; i++) {
        struct mp_slot *s = slot_at(i);
        if (!s || !s->thread_seq) continue;
        uint32_t stack_id = s->stack_id, seq = s->thread_seq;
        memset(s, 0, sizeof *s);
        memset(slot_side(i), 0, sizeof(struct mp_slot_side));
        memset(slot_peak(i), 0, sizeof(struct slot_raw));
        s->stack_id = stack_id;
        s->thread_seq = (uint16_t)seq;
    }
}

/* The end of an attach session, nothing able to reach a slot any more
 * (threads_forget): no chunk (their memory is the arena's, given back by
 * arena_forget); the next session's slots start from chunk 0. */
void slots_forget(void)
{
    uint32_t used = atomic_load(&slot_chunks_used);
    for (uint32_t c = 0; c < used && c < MAX_SLOT_CHUNKS; c++) atomic_store(&mp_slot_chunks[c], NULL);
    atomic_store(&slot_chunks_used, 0);
}

/* ------------------------------------------------------------ the expensive level */

/* t's stack → slot map whole (record.h): at most 3/4 full, its count the
 * keys it holds, each reachable from its home without an empty place
 * between, each slot t's own and of that stack; every slot below
 * slot_limit either unused or owned by a thread of the registry. */
int slots_validate(const struct mp_thread *t, char *why, size_t n)
{
    uint32_t held = 0, cap = t->slot_keys ? t->slot_mask + 1 : 0;
    if (cap && (cap & (cap - 1)))
        return snprintf(why, n, "thread %u: a map of %u places (a power of two)", t->seq, cap), -1;
    for (uint32_t i = 0; i < cap; i++) {
        uint32_t k = t->slot_keys[i];
        if (!k) continue;
        held++;
        for (uint32_t j = (uint32_t)fib_hash(k, 32) & t->slot_mask; j != i; j = (j + 1) & t->slot_mask)
            if (!t->slot_keys[j])
                return snprintf(why, n, "thread %u: stack %u at %u, an empty place %u before it", t->seq, k, i, j), -1;
        const struct mp_slot *sl = slot_at(t->slot_vals[i]);
        if (!sl || sl->thread_seq != (uint16_t)t->seq || sl->stack_id != k)
            return snprintf(why, n, "thread %u: stack %u's slot %u is %s", t->seq, k, t->slot_vals[i],
                            !sl ? "not made" : sl->stack_id != k ? "another stack's" : "another thread's"), -1;
    }
    if (held != t->slot_count || (cap && held * 4 > cap * 3))
        return snprintf(why, n, "thread %u: count %u, %u keys held in %u places", t->seq, t->slot_count, held, cap), -1;
    for (uint32_t i = 1; i < slot_limit(); i++) {
        const struct mp_slot *sl = slot_at(i);
        if (sl && sl->thread_seq && !thread_by_seq(sl->thread_seq))
            return snprintf(why, n, "slot %u: owned by thread %u, not in the registry", i, sl->thread_seq), -1;
    }
    return 0;
}
