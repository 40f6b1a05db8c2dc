/* Size histograms per stack: for each counter slot, its allocations and
 * live blocks per log2 class of the size (hist_class), beside the
 * process's histogram (the thread's hist). A thread counts in a table of
 * its own, keyed by (slot, class): its allocations in its slots, and its
 * frees in any slot (another thread's block: its owner's slot, in the
 * freeing thread's table), so that no entry is written by two threads.
 * The flush sums the tables (stack_hist_each). Open addressing, grown by
 * doubling; a table outgrown is kept, not unmapped, since the flush may be
 * reading it (at most as much again as the live tables).
 *
 * Entries are fixed point like slots (WEIGHT_ONE), with the slot's two
 * sides: allocations attributed (ncalls, memtot) and tracked blocks
 * (live_n, live_b, less the frees). */
#include "record.h"

#include <string.h>

static struct stack_hist_table *table_new(uint32_t cap)
{
    struct stack_hist_table *t = mp_map(sizeof *t + (size_t)cap * sizeof t->e[0], 1);
    if (t) t->mask = cap - 1;
    return t;
}

static struct stack_hist_entry *slot_of(struct stack_hist_table *t, uint64_t key)
{
    uint32_t i = (uint32_t)fib_hash(key, 32) & t->mask;
    while (t->e[i].key && t->e[i].key != key) i = (i + 1) & t->mask;
    return &t->e[i];
}

/* A new entry for key in the thread's table (grown when 3/4 full). */
struct stack_hist_entry *stack_hist_insert(struct mp_thread *th, uint64_t key)
{
    struct stack_hist_table *t = atomic_load_explicit(&th->stack_hist, RELAXED);
    if (!t || (t->count + 1) * 4 > (t->mask + 1) * 3) {
        struct stack_hist_table *n = table_new(t ? (t->mask + 1) * 2 : 64);
        if (!n) return NULL;
        for (uint32_t i = 0; t && i <= t->mask; i++)
            if (t->e[i].key) *slot_of(n, t->e[i].key) = t->e[i];
        n->count = t ? t->count : 0;
        atomic_store_explicit(&th->stack_hist, n, memory_order_release);
        t = n;
    }
    struct stack_hist_entry *e = slot_of(t, key);
    STORE(e->key, key);
    t->count++;
    return e;
}

void stack_hist_each(void (*fn)(const struct stack_hist_entry *e, void *arg), void *arg)
{
    for (struct mp_thread *th = thread_list(); th; th = th->next) {
        struct stack_hist_table *t = atomic_load_explicit(&th->stack_hist, memory_order_acquire);
        for (uint32_t i = 0; t && i <= t->mask; i++) {
            struct stack_hist_entry e = {
                LOAD(t->e[i].key), LOAD(t->e[i].ncalls), LOAD(t->e[i].memtot), LOAD(t->e[i].live_n), LOAD(t->e[i].live_b),
            };
            if (e.key) fn(&e, arg);
        }
    }
}

/* A fork child: the parent's blocks are forgotten, and its other threads
 * are gone (the child has one thread: no lock needed). */
void stack_hist_after_fork_child(void)
{
    for (struct mp_thread *th = thread_list(); th; th = th->next) {
        struct stack_hist_table *t = atomic_load_explicit(&th->stack_hist, RELAXED);
        if (!t) continue;
        memset(t->e, 0, (size_t)(t->mask + 1) * sizeof t->e[0]);
        t->count = 0;
    }
}
