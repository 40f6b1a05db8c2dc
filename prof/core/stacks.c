/* Interning of stacks into one tree of return addresses.
 *
 * A node is (its caller's node, a return address), the database's own shape
 * (stack(id, parent, frame)); a stack is the path from the root to its leaf
 * and its id is the leaf's. A new stack costs only the nodes it does not
 * share with the stacks before it (16 bytes each), not a copy of its
 * addresses. Nodes are immutable once published, in chunks indexed by id:
 * readers (the flush, symbol resolution) take no lock. The one exception is
 * stacks_retire: after an object is unloaded its addresses are renamed to
 * pseudo addresses (RETIRED_BASE), so that whatever is mapped there next
 * interns new nodes; lookups compare the node's address, never a copy. Two pseudo
 * addresses hang from the root: ADDR_TRUNCATED above the outermost frame of
 * a stack cut at MP_DEPTH, ADDR_UNKNOWN as the only frame of a stack the
 * unwinder found empty.
 *
 * Two indexes of node ids, open addressing:
 *  - leaves, sharded by the stack's hash (one spin lock each): hash → leaf,
 *    every candidate confirmed by walking from the leaf to the root and
 *    comparing the addresses, so interning is exact;
 *  - children, (parent, address) → node, used to add a new stack, under
 *    one lock (taken inside a leaf shard's lock; new stacks are rare next
 *    to allocations). A new stack mostly shares its outer frames with the
 *    one interned before it (an interpreter's or a compiler's deep
 *    stacks): the path of that one, kept under the same lock, gives those
 *    nodes without a lookup, each confirmed by its address.
 * Threads normally find their stacks in their own cache (record.c) and
 * come here only for a stack they have not seen recently. Tags
 * (mp_tag_push) are pseudo return addresses above TAG_BASE. */
#include "record.h"

#include <string.h>

#define LEAF_SHARDS 256
#define NODE_CHUNK_BITS 16
#define NODE_CHUNK (1u << NODE_CHUNK_BITS)
#define MAX_NODE_CHUNKS 65536

struct leaf_shard {
    atomic_flag lock;
    uint32_t mask, count;
    uint64_t *table;            /* (hash high 32 bits << 32) | leaf id; 0 = empty */
} __attribute__((aligned(CACHE_LINE)));

static struct leaf_shard shards[LEAF_SHARDS];
static _Atomic uint32_t nstacks;

/* the tree: nodes by id (1..), and the children index */
static _Atomic(struct mp_node *) node_chunks[MAX_NODE_CHUNKS];
static _Atomic uint32_t nnodes;         /* ids 1..nnodes are published */
static atomic_flag tree_lock = ATOMIC_FLAG_INIT;
static uint32_t *children;              /* node ids; 0 = empty */
static uint32_t children_mask, children_count;
/* the latest stack added or found through the children: its nodes from
 * the root (last_path[d] at depth d + 1), its first last_len ones (tree_lock) */
#define LAST_PATH_MAX 2048
static uint32_t last_path[LAST_PATH_MAX], last_len;


/* A published node (1 <= id <= nnodes, its chunk set before). */
static inline const struct mp_node *node_at(uint32_t id)
{
    return &atomic_load_explicit(&node_chunks[id >> NODE_CHUNK_BITS], memory_order_acquire)[id & (NODE_CHUNK - 1)];
}

const struct mp_node *stack_node(uint32_t id)
{
    if (!id || id > atomic_load_explicit(&nnodes, memory_order_acquire)) return NULL;
    struct mp_node *chunk = atomic_load_explicit(&node_chunks[id >> NODE_CHUNK_BITS], memory_order_acquire);
    return chunk ? &chunk[id & (NODE_CHUNK - 1)] : NULL;
}

uint32_t stack_node_count(void)
{
    return atomic_load_explicit(&nnodes, memory_order_acquire);
}

uint32_t stacks_count(void)
{
    return atomic_load_explicit(&nstacks, RELAXED);
}

/* ---------------------------------------------------------------- the tree */

static inline uint32_t child_home(uint32_t parent, uintptr_t addr)
{
    return (uint32_t)fib_hash(addr ^ ((uint64_t)parent << 40 | parent), 32);
}

static int children_grow(void)
{
    uint32_t cap = children ? (children_mask + 1) * 2 : 4096;
    uint32_t *t = mp_map((size_t)cap * sizeof *t, 1);
    if (!t) return -1;
    for (uint32_t i = 0; children && i <= children_mask; i++) {
        uint32_t id = children[i];
        if (!id) continue;
        const struct mp_node *nd = stack_node(id);
        uint32_t j = child_home(nd->parent, nd->addr) & (cap - 1);
        while (t[j]) j = (j + 1) & (cap - 1);
        t[j] = id;
    }
    if (children) mp_unmap(children, (size_t)(children_mask + 1) * sizeof *t);
    children = t;
    children_mask = cap - 1;
    return 0;
}

/* The node (parent, addr), added when new; 0 if out of memory. Under tree_lock. */
static uint32_t child(uint32_t parent, uintptr_t addr)
{
    if ((!children || (children_count + 1) * 4 > (children_mask + 1) * 3) && children_grow())
        return 0;
    uint32_t i = child_home(parent, addr) & children_mask;
    for (uint32_t id; (id = children[i]); i = (i + 1) & children_mask) {
        const struct mp_node *nd = node_at(id);
        if (nd->addr == addr && nd->parent == parent) return id;
    }
    uint32_t id = atomic_load_explicit(&nnodes, RELAXED) + 1;
    uint32_t c = id >> NODE_CHUNK_BITS;
    if (c >= MAX_NODE_CHUNKS) return 0;
    struct mp_node *chunk = atomic_load_explicit(&node_chunks[c], RELAXED);
    if (!chunk) {
        if (!(chunk = arena_alloc(NODE_CHUNK * sizeof *chunk, 1))) return 0;
        atomic_store_explicit(&node_chunks[c], chunk, memory_order_release);
    }
    const struct mp_node *up = parent ? node_at(parent) : NULL;
    MP_ASSERT(id > parent && id != 0);                  /* a parent is older than its children */
    chunk[id & (NODE_CHUNK - 1)] = (struct mp_node){ addr, parent, up ? up->depth + 1 : 1 };
    atomic_store_explicit(&nnodes, id, memory_order_release);
    children[i] = id;
    children_count++;
    return id;
}

/* The node of address addr under parent, at depth d + 1: the latest
 * path's while the path being made is the same down to parent (*same_path)
 * and that node has the address (nodes are immutable, but for the retired
 * ones' renaming), else the children's; written into the latest path
 * (made whole by stacks_intern's last_len). Under tree_lock. */
static inline uint32_t path_child(uint32_t parent, uint32_t d, uintptr_t addr, int *same_path)
{
    if (*same_path && d < last_len && node_at(last_path[d])->addr == addr) return last_path[d];
    *same_path = 0;
    uint32_t id = child(parent, addr);
    if (d < LAST_PATH_MAX) last_path[d] = id;
    return id;
}

/* Whether leaf `id` is the stack (ret_addrs, n, flags). */
static int same(uint32_t id, const uintptr_t *ret_addrs, int n, unsigned flags)
{
    int truncated = (flags & STACK_TRUNCATED) != 0;
    const struct mp_node *nd = stack_node(id);
    if (!nd || nd->depth != (uint32_t)(n + truncated)) return 0;
    for (int i = 0; i < n; i++, nd = stack_node(nd->parent))
        if (nd->addr != ret_addrs[i]) return 0;
    return !truncated || (nd && nd->addr == ADDR_TRUNCATED);
}

/* ---------------------------------------------------------------- leaves */

static int shard_grow(struct leaf_shard *sh)
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

/* runs inside malloc, on a per-thread cache miss; n >= 1 */
uint32_t stacks_intern(const uintptr_t *ret_addrs, int n, unsigned flags, uint64_t hash)
{
    struct leaf_shard *sh = &shards[hash & (LEAF_SHARDS - 1)];
    uint32_t h32 = (uint32_t)(hash >> 32);
    uint32_t id = 0;
    spin_lock(&sh->lock);
    if ((!sh->table || (sh->count + 1) * 4 > (sh->mask + 1) * 3) && shard_grow(sh) != 0)
        goto out;
    uint32_t i = h32 & sh->mask;
    for (; sh->table[i]; i = (i + 1) & sh->mask) {
        uint64_t e = sh->table[i];
        if ((uint32_t)(e >> 32) == h32 && same((uint32_t)e, ret_addrs, n, flags)) {
            id = (uint32_t)e;
            goto out;
        }
    }
    spin_lock(&tree_lock);
    uint32_t node = 0, d = 0;
    int same_path = 1;
    if (flags & STACK_TRUNCATED) node = path_child(0, d++, ADDR_TRUNCATED, &same_path);
    if (node || !(flags & STACK_TRUNCATED))
        for (int k = n - 1; k >= 0 && (node = path_child(node, d++, ret_addrs[k], &same_path)); k--) {}
    d -= !node;         /* out of memory: the nodes made */
    last_len = d < LAST_PATH_MAX ? d : LAST_PATH_MAX;
    spin_unlock(&tree_lock);
    if (!node) goto out;        /* out of memory: counted without a stack */
    sh->table[i] = ((uint64_t)h32 << 32) | node;
    sh->count++;
    atomic_fetch_add_explicit(&nstacks, 1, RELAXED);
    id = node;
out:
    spin_unlock(&sh->lock);
    return id;
}

/* rename gives the same pseudo address for the same address every time,
 * and may allocate the first time only: it is called once per node without
 * the tree lock (a lock is never held while calling out), then again under
 * it, where it only looks up. */
void stacks_retire(uintptr_t lo, uintptr_t hi, uintptr_t (*rename)(uintptr_t))
{
    uint32_t n = atomic_load_explicit(&nnodes, memory_order_acquire);
    for (uint32_t id = 1; id <= n; id++) {
        const struct mp_node *nd = stack_node(id);
        if (nd && nd->addr >= lo && nd->addr < hi) rename(nd->addr);
    }
    spin_lock(&tree_lock);
    for (uint32_t id = 1; id <= n; id++) {
        struct mp_node *nd = (struct mp_node *)stack_node(id);
        if (nd && nd->addr >= lo && nd->addr < hi) __atomic_store_n(&nd->addr, rename(nd->addr), __ATOMIC_RELAXED);
    }
    spin_unlock(&tree_lock);
}

void stacks_lock_all(void)
{
    for (int i = 0; i < LEAF_SHARDS; i++) spin_lock(&shards[i].lock);
    spin_lock(&tree_lock);
}

void stacks_unlock_all(void)
{
    spin_unlock(&tree_lock);
    for (int i = 0; i < LEAF_SHARDS; i++) spin_unlock(&shards[i].lock);
}

/* The end of an attach session, nothing able to reach a node any more
 * (threads_forget): the indexes unmapped, no node (the chunks are the
 * arena's: arena_forget); the next session's stacks are numbered from 1.
 * Tags stay (their pseudo addresses are no node's). */
void stacks_forget(void)
{
    stacks_lock_all();
    for (int i = 0; i < LEAF_SHARDS; i++) {
        struct leaf_shard *sh = &shards[i];
        if (sh->table) mp_unmap(sh->table, (size_t)(sh->mask + 1) * sizeof *sh->table);
        sh->table = NULL, sh->mask = sh->count = 0;
    }
    if (children) mp_unmap(children, (size_t)(children_mask + 1) * sizeof *children);
    children = NULL, children_mask = children_count = 0;
    uint32_t n = atomic_load(&nnodes);
    for (uint32_t c = 0; c <= n >> NODE_CHUNK_BITS && c < MAX_NODE_CHUNKS; c++) atomic_store(&node_chunks[c], NULL);
    atomic_store(&nnodes, 0);
    atomic_store(&nstacks, 0);
    last_len = 0;
    stacks_unlock_all();
}

/* ---------------------------------------------------------------- tags */

#define MAX_TAG_NAMES 4096
#define TAG_LEN 64
static atomic_flag tag_lock = ATOMIC_FLAG_INIT;
static char tag_names[MAX_TAG_NAMES][TAG_LEN];
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
    if (i == n && n < MAX_TAG_NAMES) {
        memcpy(tag_names[n], buf, TAG_LEN);
        atomic_store_explicit(&ntags, n + 1, memory_order_release);
    }
    spin_unlock(&tag_lock);
    return TAG_BASE + i;        /* past the table (full): a tag named "(tag)" */
}

const char *tag_name(uintptr_t addr)
{
    if (addr < TAG_BASE) return NULL;
    uint32_t i = (uint32_t)(addr - TAG_BASE);
    return i < atomic_load_explicit(&ntags, memory_order_acquire) ? tag_names[i] : "(tag)";
}
