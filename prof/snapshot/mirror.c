/* This process's mirror of what the database shares between its writers:
 * the dictionaries (module, function, file, frame: key → id) and the stack
 * tree ((parent, frame) → id), brought up to date at the start of each flush
 * by reading only the rows added since (id > the largest id seen), under the
 * write lock (BEGIN IMMEDIATE). New rows get explicit ids. So a flush costs
 * what is new (distinct stacks and addresses), never the number of
 * allocations. Two memos sit on top: a return address's frame ids (its
 * inline chain; forgotten after an unload) and a recorder node's database
 * stack id. */
#define _GNU_SOURCE
#include "flush.h"

#include <stdlib.h>
#include <string.h>

/* Byte-string key → database id, open addressing. */
struct dict {
    struct dict_entry { uint64_t hash; int64_t id; size_t len; char *key; } *e;
    size_t mask, count;
    int64_t max_id;             /* largest id of the table seen so far */
};

static struct {
    struct dict dicts[ND];
    struct node_map tree;       /* the stack table: (parent, frame) → id */
    int64_t tree_max_id;
    int tree_behind;            /* other processes' rows not read yet (mirror_sync) */
    uint32_t *node_ids;         /* recorder's stack node → database stack id */
    size_t nnode_ids, nmapped;  /* nmapped: nonzero node_ids */
    struct dict addrs;          /* return address → index in addr_frames + 1 */
    int64_t *addr_frames;       /* count, frame ids... */
    size_t naddr_frames, cap_addr_frames;
} m;

/* ------------------------------------------------------------ dictionary */

/* Never 0 (an empty entry). */
static uint64_t bytes_hash(const void *key, size_t len)
{
    return (fnv1a(key, len) ^ len) | 1;
}

static void dict_clear(struct dict *d)
{
    for (size_t i = 0; d->e && i <= d->mask; i++) free(d->e[i].key);
    free(d->e);
    memset(d, 0, sizeof *d);
}

static int64_t dict_get(const struct dict *d, const void *key, size_t len, uint64_t h)
{
    if (!d->e) return 0;
    for (size_t i = h & d->mask; d->e[i].hash; i = (i + 1) & d->mask)
        if (d->e[i].hash == h && d->e[i].len == len && !memcmp(d->e[i].key, key, len))
            return d->e[i].id;
    return 0;
}

static int dict_put(struct writer *w, struct dict *d, const void *key, size_t len, uint64_t h, int64_t id)
{
    if ((d->count + 1) * 2 > (d->e ? d->mask + 1 : 0)) {
        size_t cap = d->e ? (d->mask + 1) * 2 : 1024;
        struct dict_entry *t = calloc(cap, sizeof *t);
        if (!t) return fail(w, "out of memory");
        for (size_t i = 0; d->e && i <= d->mask; i++) {
            if (!d->e[i].hash) continue;
            size_t j = d->e[i].hash & (cap - 1);
            while (t[j].hash) j = (j + 1) & (cap - 1);
            t[j] = d->e[i];
        }
        free(d->e);
        d->e = t;
        d->mask = cap - 1;
    }
    char *copy = malloc(len ? len : 1);
    if (!copy) return fail(w, "out of memory");
    memcpy(copy, key, len);
    size_t i = h & d->mask;
    while (d->e[i].hash) i = (i + 1) & d->mask;
    d->e[i] = (struct dict_entry){ h, id, len, copy };
    d->count++;
    if (id > d->max_id) d->max_id = id;
    return 0;
}

/* ------------------------------------------------------------ sync */

void mirror_forget(void)
{
    for (int d = 0; d < ND; d++) dict_clear(&m.dicts[d]);
    node_clear(&m.tree);
    m.tree_max_id = 0;
    free(m.node_ids), m.node_ids = NULL, m.nnode_ids = m.nmapped = 0;
    mirror_forget_addresses();
}

/* After an unload: return addresses may now belong to another object. */
void mirror_forget_addresses(void)
{
    dict_clear(&m.addrs);
    m.naddr_frames = 0;
}

static int sync_dict(struct writer *w, int d, const char *sql)
{
    sqlite3_stmt *st = prepare(w, sql);
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, m.dicts[d].max_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), key[3];
        const void *k = key;
        size_t len = sizeof key;
        if (d == D_FRAME) {
            for (int i = 0; i < 3; i++) key[i] = sqlite3_column_int64(st, 1 + i);
        } else {
            k = sqlite3_column_blob(st, 1);
            len = (size_t)sqlite3_column_bytes(st, 1);
            if (!k) k = "";
        }
        if (dict_put(w, &m.dicts[d], k, len, bytes_hash(k, len), id)) rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(w, "cannot read the database's dictionaries");
}

/* The nodes of the runs written since (a run is written whole: one of an
 * id above the largest seen is all new). */
static int sync_tree(struct writer *w)
{
    sqlite3_stmt *st = prepare(w, "SELECT r.id + j.key, CASE j.key WHEN 0 THEN r.parent ELSE r.id + j.key - 1 END, "
                                  "j.value FROM stack_run r, json_each(r.frames) j WHERE r.id > ?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, m.tree_max_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), parent = sqlite3_column_int64(st, 1),
                frame = sqlite3_column_int64(st, 2);
        if (id > UINT32_MAX || parent > UINT32_MAX || frame > UINT32_MAX || id <= 0 || parent < 0 || frame <= 0 ||
            node_put(&m.tree, (uint32_t)parent, (uint32_t)frame, (uint32_t)id)) {
            rc = SQLITE_NOMEM;
            break;
        }
        if (id > m.tree_max_id) m.tree_max_id = id;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(w, "cannot read the database's stack tree");
}

static const struct { const char *sync, *max; enum format_table insert; } tables[ND] = {
    [D_MODULE] = { "SELECT id, path || char(0) || build_id FROM module WHERE id > ?", "SELECT max(id) FROM module",
                   FT_module },
    [D_FUNCTION] = { "SELECT id, name FROM function WHERE id > ?", "SELECT max(id) FROM function",
                     FT_function },
    [D_FILE] = { "SELECT id, path FROM file WHERE id > ?", "SELECT max(id) FROM file",
                 FT_file },
    [D_FRAME] = { "SELECT id, module, offset, inline_depth FROM frame WHERE id > ?", "SELECT max(id) FROM frame",
                  FT_frame },
};

/* Whether the database has fewer rows than we saw: it was replaced behind
 * our back, and what we know of it is void. */
int mirror_stale(struct writer *w)
{
    int shrank = query_int(w, "SELECT id + json_array_length(frames) - 1 FROM stack_run ORDER BY id DESC LIMIT 1", 0) <
                 m.tree_max_id;
    for (int d = 0; d < ND && !shrank; d++) shrank = query_int(w, tables[d].max, 0) < m.dicts[d].max_id;
    return shrank;
}

/* Reads the rows other processes added since our last look; the stack
 * tree's only when this snapshot writes a stack (tree_ready): a process
 * with no stack of its own does not mirror the whole tree (the run's other
 * processes' nodes: /usr/bin/time's exit snapshot after clang's held
 * 500,000 of them, 15 MB). */
int mirror_sync(struct writer *w)
{
    for (int d = 0; d < ND; d++)
        if (sync_dict(w, d, tables[d].sync)) return -1;
    m.tree_behind = 1;
    return 0;
}

static int tree_ready(struct writer *w)
{
    if (!m.tree_behind) return 0;
    m.tree_behind = 0;
    return sync_tree(w);
}

int mirror_prepare(struct writer *w)
{
    for (int d = 0; d < ND; d++)
        if (!(w->ins[d] = prepare_insert(w, "INSERT", tables[d].insert, 1))) return -1;
    return 0;
}

/* Each node not mapped yet adds a database node or more (inline levels: a
 * quarter more is allowed for; past that the map grows by half). */
int mirror_reserve(void)
{
    size_t unmapped = stack_node_count() - m.nmapped;
    return node_reserve(&m.tree, unmapped + unmapped / 4);
}

/* ------------------------------------------------------------ new rows */

/* Id of a text row (module/function/file), inserting it when new. */
static int64_t text_id(struct writer *w, int d, const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) + 1 : 0;
    char stackbuf[512], *key = la + lb <= sizeof stackbuf ? stackbuf : malloc(la + lb);
    if (!key) return fail(w, "out of memory"), 0;
    memcpy(key, a, la);
    if (b) key[la] = 0, memcpy(key + la + 1, b, lb - 1);
    size_t len = la + lb;
    uint64_t h = bytes_hash(key, len);
    int64_t id = dict_get(&m.dicts[d], key, len, h);
    if (!id) {
        id = m.dicts[d].max_id + 1;
        sqlite3_stmt *st = w->ins[d];      /* (id, text[, text]): module, function, file */
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, a, (int)la, SQLITE_STATIC);
        if (b) sqlite3_bind_text(st, 3, b, (int)lb - 1, SQLITE_STATIC);
        if (step_done(w, st) || dict_put(w, &m.dicts[d], key, len, h, id)) id = 0;
    }
    if (key != stackbuf) free(key);
    return id;
}

static int64_t frame_id(struct writer *w, const struct sym_frame *f, int depth)
{
    int64_t module = text_id(w, D_MODULE, f->module, f->build_id);
    if (!module) return 0;
    int64_t key[3] = { module, (int64_t)f->offset, depth };
    uint64_t h = bytes_hash(key, sizeof key);
    int64_t id = dict_get(&m.dicts[D_FRAME], key, sizeof key, h);
    if (id) return id;
    int64_t function = f->function ? text_id(w, D_FUNCTION, f->function, NULL) : 0;
    int64_t file = f->file ? text_id(w, D_FILE, f->file, NULL) : 0;
    id = m.dicts[D_FRAME].max_id + 1;
    sqlite3_stmt *st = w->ins[D_FRAME];
    sqlite3_bind_int64(st, FORMAT_PARAM(frame, id), id);
    sqlite3_bind_int64(st, FORMAT_PARAM(frame, module), module);
    sqlite3_bind_int64(st, FORMAT_PARAM(frame, offset), key[1]);
    sqlite3_bind_int64(st, FORMAT_PARAM(frame, inline_depth), depth);
    if (function) sqlite3_bind_int64(st, FORMAT_PARAM(frame, function), function);
    if (file) sqlite3_bind_int64(st, FORMAT_PARAM(frame, file), file);
    sqlite3_bind_int64(st, FORMAT_PARAM(frame, line), f->line);
    if (step_done(w, st) || dict_put(w, &m.dicts[D_FRAME], key, sizeof key, h, id)) return 0;
    return id;
}

static int end_run(struct writer *w);

static int64_t db_stack_node(struct writer *w, int64_t parent, int64_t frame)
{
    if (frame > UINT32_MAX || m.tree_max_id >= UINT32_MAX)
        return fail(w, "more than 2^32 stack nodes or frames"), 0;
    int64_t id = node_get(&m.tree, (uint32_t)parent, (uint32_t)frame);
    if (id) return id;
    id = m.tree_max_id + 1;
    MP_ASSERT(parent < id && id <= UINT32_MAX);         /* the database's tree: parents first */
    if (!stack_run_extends(&w->run, id, parent) && end_run(w)) return 0;
    if (stack_run_push(&w->run, id, parent, frame)) return fail(w, "out of memory"), 0;
    if (node_put(&m.tree, (uint32_t)parent, (uint32_t)frame, (uint32_t)id)) return fail(w, "out of memory"), 0;
    m.tree_max_id = id;
    return id;
}

/* The frame ids of one return address (its inline chain), memoized. */
static const int64_t *address_frames(struct writer *w, uintptr_t addr, int *n)
{
    uint64_t h = bytes_hash(&addr, sizeof addr);
    int64_t at = dict_get(&m.addrs, &addr, sizeof addr, h);
    if (!at) {
        const struct sym_frame *f;
        int nf = symbols_resolve(addr, &f);
        if (grow_array(&m.addr_frames, &m.cap_addr_frames, m.naddr_frames + nf + 2, sizeof *m.addr_frames))
            return fail(w, "out of memory"), NULL;
        at = (int64_t)m.naddr_frames + 1;     /* 0 means absent */
        m.addr_frames[m.naddr_frames] = nf;
        for (int i = 0; i < nf; i++)
            if (!(m.addr_frames[m.naddr_frames + 1 + i] = frame_id(w, &f[i], i))) return NULL;
        m.naddr_frames += (size_t)nf + 1;
        if (dict_put(w, &m.addrs, &addr, sizeof addr, h, at)) return NULL;
    }
    *n = (int)m.addr_frames[at - 1];
    return &m.addr_frames[at];
}

/* Database id of a recorder's stack node: its address's frames (the inline
 * chain, outermost first) under its parent's id. Memoized per node, so a
 * node is mapped once, whatever the number of stacks through it. */
int64_t mirror_stack(struct writer *w, uint32_t id)
{
    if (tree_ready(w)) return 0;
    if (grow_array(&m.node_ids, &m.nnode_ids, (size_t)stack_node_count() + 1, sizeof *m.node_ids))
        return fail(w, "out of memory"), 0;
    uint32_t path[MP_CAPTURE_ROOM + MP_MAX_TAGS + MP_PY_FRAMES + 1];
    int k = 0;
    while (id && !m.node_ids[id]) {       /* up to the root or a mapped ancestor */
        const struct mp_node *nd = stack_node(id);
        if (!nd || k == (int)(sizeof path / sizeof *path)) return 0;
        path[k++] = id;
        id = nd->parent;
    }
    int64_t node = id ? m.node_ids[id] : 0;
    while (k > 0) {
        uint32_t x = path[--k];
        int n;
        const int64_t *frames = address_frames(w, stack_node(x)->addr, &n);
        if (!frames) return 0;
        for (int f = 0; f < n; f++)
            if (!(node = db_stack_node(w, node, frames[f]))) return 0;
        m.node_ids[x] = (uint32_t)node;
        m.nmapped++;
    }
    return node;
}

/* Every recorder node mapped and its new rows written (flush_ahead): in
 * id order, so that each node's parent is mapped before it. */
int mirror_all(struct writer *w)
{
    uint32_t n = stack_node_count();
    if (tree_ready(w)) return -1;
    if (grow_array(&m.node_ids, &m.nnode_ids, (size_t)n + 1, sizeof *m.node_ids) || mirror_reserve())
        return fail(w, "out of memory");
    for (uint32_t id = 1; id <= n; id++)
        if (!m.node_ids[id] && !mirror_stack(w, id)) return -1;
    return mirror_write_run(w);
}

/* The runs ended so far into stack_run: a full batch with its statement,
 * fewer row by row (as flush_sql.c's batches of numbers). */
static int runs_flush(struct writer *w)
{
    struct run_batch *b = &w->runs;
    int per = b->n == BATCH_ROWS ? BATCH_ROWS : 1, rc = 0;
    sqlite3_stmt **stp = per == 1 ? &b->one : &b->many;
    if (b->n && !*stp && !(*stp = prepare_insert(w, "INSERT", FT_stack_run, per))) return b->n = 0, -1;
    for (int r = 0; r < b->n && !rc; r += per) {
        for (int i = r; i < r + per; i++) {
            size_t start = i ? b->end[i - 1] : 0;
            int p = (i - r) * FC_stack_run_N;
            sqlite3_bind_int64(*stp, p + FORMAT_PARAM(stack_run, id), b->id[i]);
            sqlite3_bind_int64(*stp, p + FORMAT_PARAM(stack_run, parent), b->parent[i]);
            sqlite3_bind_text(*stp, p + FORMAT_PARAM(stack_run, frames), b->text + start, (int)(b->end[i] - start),
                              SQLITE_STATIC);
        }
        rc = step_done(w, *stp);
    }
    b->n = 0, b->len = 0;
    return rc;
}

/* The pending run ended: into the batch (its id: its first node's). */
static int end_run(struct writer *w)
{
    struct run_batch *b = &w->runs;
    size_t len;
    const char *frames = stack_run_take(&w->run, &len);
    if (!frames) return 0;
    if (grow_array(&b->text, &b->cap, b->len + len, 1)) return fail(w, "out of memory");
    memcpy(b->text + b->len, frames, len);
    b->len += len;
    b->id[b->n] = w->run.first, b->parent[b->n] = w->run.parent, b->end[b->n] = b->len;
    return ++b->n == BATCH_ROWS ? runs_flush(w) : 0;
}

int mirror_write_run(struct writer *w)
{
    return end_run(w) || runs_flush(w) ? -1 : 0;
}

