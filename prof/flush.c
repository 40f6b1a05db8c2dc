/* A snapshot: counters → SQLite, in ONE transaction with prepared statements.
 *
 * The dictionary tables (module, function, file, frame, stack) are shared by
 * every process writing the database, so each process keeps an in-memory
 * mirror of them (key → id), brought up to date at the start of each flush
 * by reading only the rows added since (id > the largest id seen), under the
 * write lock (BEGIN IMMEDIATE). New rows get explicit ids. The cost of a
 * flush is thus proportional to what is new: distinct stacks and addresses,
 * plus the sample rows that changed, never the number of allocations.
 *
 * Any failure rolls back and forgets the mirrors and row ids, so the next
 * flush starts from what the database really holds. The flush runs with the
 * profiler marked internal: SQLite, libdw and this file allocate with the
 * real malloc. */
#define _GNU_SOURCE
#include "internal.h"
#include "dbguard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema_version.h"     /* SCHEMA_VERSION, from the schema's PRAGMA user_version */
static const char schema_sql[] =
#include "schema.h"
    ;

static pthread_mutex_t flush_mutex = PTHREAD_MUTEX_INITIALIZER;
pid_t mp_pid;

void flush_lock(void) { pthread_mutex_lock(&flush_mutex); }
void flush_unlock(void) { pthread_mutex_unlock(&flush_mutex); }

/* ------------------------------------------------------------ dictionary */

/* Byte-string key → database id, open addressing. */
struct dict {
    struct dict_entry { uint64_t hash; int64_t id; size_t len; char *key; } *e;
    size_t mask, count;
    int64_t max_id;             /* largest id of the table seen so far */
};

static uint64_t bytes_hash(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 1469598103934665603ull ^ len;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h | 1;
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

static int dict_put(struct dict *d, const void *key, size_t len, uint64_t h, int64_t id)
{
    if ((d->count + 1) * 2 > (d->e ? d->mask + 1 : 0)) {
        size_t cap = d->e ? (d->mask + 1) * 2 : 1024;
        struct dict_entry *t = calloc(cap, sizeof *t);
        if (!t) return -1;
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
    if (!copy) return -1;
    memcpy(copy, key, len);
    size_t i = h & d->mask;
    while (d->e[i].hash) i = (i + 1) & d->mask;
    d->e[i] = (struct dict_entry){ h, id, len, copy };
    d->count++;
    if (id > d->max_id) d->max_id = id;
    return 0;
}

/* The stack tree's (parent, frame) → id: by far the largest dictionary
 * (a node per distinct frame position), so its entries are 12 bytes with
 * the key inline. Ids are below 2^32 (checked where they enter). The
 * capacity is any number (the home is the hash scaled to it): the table
 * grows by half, and is sized ahead for the nodes a flush is about to add,
 * so it stays between 1/2 and 3/4 full and a big first flush does not
 * double it step by step. */
struct node_map {
    struct node_entry { uint32_t parent, frame, id; } *e;     /* id 0 = empty */
    size_t cap, count;
};

static inline size_t node_home(uint32_t parent, uint32_t frame, size_t cap)
{
    uint64_t h = (((uint64_t)parent << 32 | frame) * 0x9E3779B97F4A7C15ull) >> 32;
    return (size_t)((h * cap) >> 32);
}

static uint32_t node_get(const struct node_map *m, uint32_t parent, uint32_t frame)
{
    if (!m->e) return 0;
    for (size_t i = node_home(parent, frame, m->cap); m->e[i].id; i = i + 1 == m->cap ? 0 : i + 1)
        if (m->e[i].parent == parent && m->e[i].frame == frame) return m->e[i].id;
    return 0;
}

/* Room for `more` entries past the current ones at 3/4 load at most. */
static int node_reserve(struct node_map *m, size_t more)
{
    size_t need = m->count + more;
    if (need * 4 <= m->cap * 3) return 0;
    size_t cap = m->cap ? m->cap + m->cap / 2 : 4096;
    if (need * 4 > cap * 3) cap = need * 4 / 3 + 1;
    if (cap > UINT32_MAX) return -1;
    struct node_entry *t = mp_map(cap * sizeof *t, 0);
    if (!t) return -1;
    for (size_t i = 0; m->e && i < m->cap; i++) {
        if (!m->e[i].id) continue;
        size_t j = node_home(m->e[i].parent, m->e[i].frame, cap);
        while (t[j].id) j = j + 1 == cap ? 0 : j + 1;
        t[j] = m->e[i];
    }
    if (m->e) mp_unmap(m->e, m->cap * sizeof *m->e);
    m->e = t;
    m->cap = cap;
    return 0;
}

static int node_put(struct node_map *m, uint32_t parent, uint32_t frame, uint32_t id)
{
    if (node_reserve(m, 1)) return -1;
    size_t i = node_home(parent, frame, m->cap);
    while (m->e[i].id) i = i + 1 == m->cap ? 0 : i + 1;
    m->e[i] = (struct node_entry){ parent, frame, id };
    m->count++;
    return 0;
}

static void node_clear(struct node_map *m)
{
    if (m->e) mp_unmap(m->e, m->cap * sizeof *m->e);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------ state */

/* What this process knows of the database; reset on failure and in a fork
 * child (which becomes a new process row, but shares the dictionaries). */
enum { D_MODULE, D_FUNCTION, D_FILE, D_FRAME, D_STACK, D_ADDR, ND };
static struct dict dicts[ND];        /* D_STACK: only its max_id; entries in nodes */
static struct node_map nodes;
static int64_t run_id, process_id, snapshot_seq;
static int64_t *thread_ids;          /* by thread seq */
static size_t nthread_ids;
static uint32_t *node_ids;           /* recorder's stack node → database stack id */
static size_t nnode_ids, nmapped;    /* nmapped: nonzero node_ids */
static int64_t *addr_frames;         /* D_ADDR values index this: count, ids... */
static size_t naddr_frames, cap_addr_frames;
struct written { uint64_t ncalls, memtot, nfree, memlive, maxlive; };
static struct written *prev;         /* by slot: values in the previous snapshot */
static size_t nprev;
/* Several counter slots of a thread can be one row (stack, thread) of the
 * database: stacks that differ only in addresses of an object loaded twice
 * (dlclose, dlopen again elsewhere) have the same frames. The first slot
 * mapped to a row is its canonical slot; the row is the sum of the slots
 * chained from it. */
static uint32_t *canon, *alias_next; /* by slot; canon 0 = not mapped yet */
static size_t ncanon, nalias;
static struct node_map rows;         /* (database stack, thread seq) → canonical slot */

static void forget_rows(void)
{
    free(prev), prev = NULL, nprev = 0;
    free(canon), canon = NULL, ncanon = 0;
    free(alias_next), alias_next = NULL, nalias = 0;
    node_clear(&rows);
}

static void forget_database(void)
{
    for (int i = 0; i < ND; i++) dict_clear(&dicts[i]);
    node_clear(&nodes);
    run_id = process_id = snapshot_seq = 0;
    free(thread_ids), thread_ids = NULL, nthread_ids = 0;
    free(node_ids), node_ids = NULL, nnode_ids = nmapped = 0;
    free(addr_frames), addr_frames = NULL, naddr_frames = cap_addr_frames = 0;
    forget_rows();
}

void flush_after_fork_child(void)
{
    mp_pid = getpid();
    process_id = snapshot_seq = 0;
    free(thread_ids), thread_ids = NULL, nthread_ids = 0;
    forget_rows();
}

/* After an unload: return addresses may now belong to another object. */
void flush_forget_addresses(void)
{
    dict_clear(&dicts[D_ADDR]);
    naddr_frames = 0;
}

static int grow_array(void *pp, size_t *n, size_t need, size_t elem)
{
    if (need <= *n) return 0;
    size_t cap = *n ? *n : 256;
    while (cap < need) cap *= 2;
    void *p = realloc(*(void **)pp, cap * elem);
    if (!p) return -1;
    memset((char *)p + *n * elem, 0, (cap - *n) * elem);
    *(void **)pp = p;
    *n = cap;
    return 0;
}

/* ------------------------------------------------------------ statements */

/* Rows of the two big tables (stack nodes, samples) go in by BATCH_ROWS
 * per INSERT: a statement per row costs more than the row. */
#define BATCH_ROWS 64
#define BATCH_COLS 8
struct batch {
    sqlite3_stmt *many, *one;   /* BATCH_ROWS rows; one row (a snapshot's rest) */
    int ncols, n;
    int64_t v[BATCH_ROWS * BATCH_COLS];
};

struct writer {
    sqlite3 *db;
    const char *error;      /* first failure, for the one-line report */
    char error_text[256];
    sqlite3_stmt *ins[ND];  /* D_STACK: unused, see stacks */
    sqlite3_stmt *totals;
    struct batch stacks, samples;
};

/* Keeps the first failure's text (SQLite's message buffer changes later). */
static int fail(struct writer *w, const char *what)
{
    if (!w->error) {
        snprintf(w->error_text, sizeof w->error_text, "%s", what);
        w->error = w->error_text;
    }
    return -1;
}

static sqlite3_stmt *prepare(struct writer *w, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) fail(w, sqlite3_errmsg(w->db));
    return st;
}

static int step_done(struct writer *w, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(w, sqlite3_errmsg(w->db));
}

/* "INSERT INTO table VALUES (?,..),(?,..)..." with `rows` rows. */
static sqlite3_stmt *prepare_insert(struct writer *w, const char *table, int ncols, int rows)
{
    char sql[BATCH_ROWS * (2 * BATCH_COLS + 4) + 64];
    int len = snprintf(sql, sizeof sql, "INSERT INTO %s VALUES ", table);
    for (int r = 0; r < rows; r++) {
        sql[len++] = r ? ',' : ' ';
        sql[len++] = '(';
        for (int c = 0; c < ncols; c++) sql[len++] = '?', sql[len++] = c + 1 < ncols ? ',' : ')';
    }
    sql[len] = 0;
    return prepare(w, sql);
}

static int batch_prepare(struct writer *w, struct batch *b, const char *table, int ncols)
{
    b->ncols = ncols;
    b->n = 0;
    b->many = prepare_insert(w, table, ncols, BATCH_ROWS);
    b->one = prepare_insert(w, table, ncols, 1);
    return b->many && b->one ? 0 : -1;
}

/* Writes the rows collected so far: a full batch with its statement, a
 * partial one (the end of a snapshot) row by row. */
static int batch_flush(struct writer *w, struct batch *b)
{
    int per = b->n == BATCH_ROWS ? BATCH_ROWS : 1, rc = 0;
    sqlite3_stmt *st = per == 1 ? b->one : b->many;
    for (int r = 0; r < b->n && !rc; r += per) {
        for (int i = 0; i < per * b->ncols; i++) sqlite3_bind_int64(st, i + 1, b->v[r * b->ncols + i]);
        rc = step_done(w, st);
    }
    b->n = 0;
    return rc;
}

static int batch_add(struct writer *w, struct batch *b, const int64_t *row)
{
    memcpy(&b->v[b->n * b->ncols], row, (size_t)b->ncols * sizeof *row);
    return ++b->n == BATCH_ROWS ? batch_flush(w, b) : 0;
}

static int exec(struct writer *w, const char *sql)
{
    return sqlite3_exec(w->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(w, sqlite3_errmsg(w->db));
}

static int64_t query_int(struct writer *w, const char *sql, int64_t deflt)
{
    sqlite3_stmt *st = prepare(w, sql);
    int64_t v = deflt;
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* ------------------------------------------------------------ schema, mirrors */

/* The file's schema must be ours, object for object (dbguard.c): SQL that a
 * file brings (a trigger, a view) never runs inside the profiled program. */
static int ensure_schema(struct writer *w)
{
    int64_t version = query_int(w, "PRAGMA user_version", -1);
    if (version == SCHEMA_VERSION) {
        static char msg[256];
        return db_schema_check(w->db, msg, sizeof msg) ? fail(w, msg) : 0;
    }
    if (version != 0) {
        static char msg[128];
        snprintf(msg, sizeof msg, "the database has schema version %lld, this profiler writes %d",
                 (long long)version, SCHEMA_VERSION);
        return fail(w, msg);
    }
    if (query_int(w, "SELECT count(*) FROM sqlite_master", 0) != 0)
        return fail(w, "the file is an SQLite database of another program (not a mallocprof profile)");
    return exec(w, schema_sql);         /* it sets user_version last */
}

/* Reads the dictionary rows other processes added since our last look. */
static int sync_mirrors(struct writer *w)
{
    static const char *const sql[ND] = {
        [D_MODULE] = "SELECT id, path || char(0) || build_id FROM module WHERE id > ?",
        [D_FUNCTION] = "SELECT id, name FROM function WHERE id > ?",
        [D_FILE] = "SELECT id, path FROM file WHERE id > ?",
        [D_FRAME] = "SELECT id, module, offset, inline_depth FROM frame WHERE id > ?",
        [D_STACK] = "SELECT id, parent, frame FROM stack WHERE id > ?",
    };
    static const char *const max_sql[ND] = {
        [D_MODULE] = "SELECT max(id) FROM module", [D_FUNCTION] = "SELECT max(id) FROM function",
        [D_FILE] = "SELECT max(id) FROM file", [D_FRAME] = "SELECT max(id) FROM frame",
        [D_STACK] = "SELECT max(id) FROM stack",
    };
    /* a database that shrank was replaced behind our back: start over */
    for (int d = 0; d < D_ADDR; d++)
        if (query_int(w, max_sql[d], 0) < dicts[d].max_id) {
            forget_database();
            break;
        }
    for (int d = 0; d < D_ADDR; d++) {
        sqlite3_stmt *st = prepare(w, sql[d]);
        if (!st) return -1;
        sqlite3_bind_int64(st, 1, dicts[d].max_id);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0), key[3];
            const void *k = key;
            size_t len;
            if (d == D_STACK) {
                int64_t parent = sqlite3_column_int64(st, 1), frame = sqlite3_column_int64(st, 2);
                if (id > UINT32_MAX || parent > UINT32_MAX || frame > UINT32_MAX || id <= 0 || parent < 0 ||
                    frame <= 0 || node_put(&nodes, (uint32_t)parent, (uint32_t)frame, (uint32_t)id)) {
                    rc = SQLITE_NOMEM;
                    break;
                }
                if (id > dicts[d].max_id) dicts[d].max_id = id;
                continue;
            }
            if (d == D_FRAME) {
                for (int i = 0; i < 3; i++) key[i] = sqlite3_column_int64(st, 1 + i);
                len = sizeof key;
            } else {
                k = sqlite3_column_blob(st, 1);
                len = (size_t)sqlite3_column_bytes(st, 1);
                if (!k) k = "";
            }
            if (dict_put(&dicts[d], k, len, bytes_hash(k, len), id)) rc = SQLITE_NOMEM;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return fail(w, "cannot read the database's dictionaries");
    }
    /* our process row must still be there (same database) */
    if (process_id) {
        char sql2[96];
        snprintf(sql2, sizeof sql2, "SELECT pid FROM process WHERE id = %lld", (long long)process_id);
        if (query_int(w, sql2, -1) != mp_pid) {
            forget_database();
            return sync_mirrors(w);
        }
    }
    return 0;
}

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
    int64_t id = dict_get(&dicts[d], key, len, h);
    if (!id) {
        id = dicts[d].max_id + 1;
        sqlite3_stmt *st = w->ins[d];
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, a, (int)la, SQLITE_STATIC);
        if (b) sqlite3_bind_text(st, 3, b, (int)lb - 1, SQLITE_STATIC);
        if (step_done(w, st) || dict_put(&dicts[d], key, len, h, id)) id = 0;
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
    int64_t id = dict_get(&dicts[D_FRAME], key, sizeof key, h);
    if (id) return id;
    int64_t function = f->function ? text_id(w, D_FUNCTION, f->function, NULL) : 0;
    int64_t file = f->file ? text_id(w, D_FILE, f->file, NULL) : 0;
    id = dicts[D_FRAME].max_id + 1;
    sqlite3_stmt *st = w->ins[D_FRAME];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, module);
    sqlite3_bind_int64(st, 3, key[1]);
    sqlite3_bind_int64(st, 4, depth);
    if (function) sqlite3_bind_int64(st, 5, function);
    if (file) sqlite3_bind_int64(st, 6, file);
    sqlite3_bind_int64(st, 7, f->line);
    if (step_done(w, st) || dict_put(&dicts[D_FRAME], key, sizeof key, h, id)) return 0;
    return id;
}

static int64_t db_stack_node(struct writer *w, int64_t parent, int64_t frame)
{
    if (frame > UINT32_MAX || dicts[D_STACK].max_id >= UINT32_MAX)
        return fail(w, "more than 2^32 stack nodes or frames"), 0;
    int64_t id = node_get(&nodes, (uint32_t)parent, (uint32_t)frame);
    if (id) return id;
    id = dicts[D_STACK].max_id + 1;
    if (batch_add(w, &w->stacks, (const int64_t[]){ id, parent, frame })) return 0;
    if (node_put(&nodes, (uint32_t)parent, (uint32_t)frame, (uint32_t)id)) return fail(w, "out of memory"), 0;
    dicts[D_STACK].max_id = id;
    return id;
}

/* The frame ids of one return address (its inline chain), memoized. */
static const int64_t *address_frames(struct writer *w, uintptr_t addr, int *n)
{
    uint64_t h = bytes_hash(&addr, sizeof addr);
    int64_t at = dict_get(&dicts[D_ADDR], &addr, sizeof addr, h);
    if (!at) {
        const struct sym_frame *f;
        int nf = symbols_resolve(addr, &f);
        if (grow_array(&addr_frames, &cap_addr_frames, naddr_frames + nf + 2, sizeof *addr_frames))
            return fail(w, "out of memory"), NULL;
        at = (int64_t)naddr_frames + 1;     /* 0 means absent */
        addr_frames[naddr_frames] = nf;
        for (int i = 0; i < nf; i++)
            if (!(addr_frames[naddr_frames + 1 + i] = frame_id(w, &f[i], i))) return NULL;
        naddr_frames += (size_t)nf + 1;
        if (dict_put(&dicts[D_ADDR], &addr, sizeof addr, h, at)) return NULL;
        dicts[D_ADDR].max_id = 0;           /* not a table: never synced */
    }
    *n = (int)addr_frames[at - 1];
    return &addr_frames[at];
}

/* Database id of a recorder's stack node: its address's frames (the inline
 * chain, outermost first) under its parent's id. Memoized per node, so a
 * node is mapped once, whatever the number of stacks through it. */
static int64_t stack_id_in_db(struct writer *w, uint32_t id)
{
    if (grow_array(&node_ids, &nnode_ids, (size_t)stack_node_count() + 1, sizeof *node_ids)) return 0;
    uint32_t path[MP_CAPTURE_ROOM + MP_MAX_TAGS + 1];
    int k = 0;
    while (id && !node_ids[id]) {       /* up to the root or a mapped ancestor */
        const struct mp_node *nd = stack_node(id);
        if (!nd || k == (int)(sizeof path / sizeof *path)) return 0;
        path[k++] = id;
        id = nd->parent;
    }
    int64_t node = id ? node_ids[id] : 0;
    while (k > 0) {
        uint32_t x = path[--k];
        int n;
        const int64_t *frames = address_frames(w, stack_node(x)->addr, &n);
        if (!frames) return 0;
        for (int f = 0; f < n; f++)
            if (!(node = db_stack_node(w, node, frames[f]))) return 0;
        node_ids[x] = (uint32_t)node;
        nmapped++;
    }
    return node;
}

/* ------------------------------------------------------------ rows */

static void read_cmdline(char *buf, size_t size)
{
    buf[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0) return;
    if (buf[n - 1] == 0) n--;
    for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
    buf[n] = 0;
}

static int write_process(struct writer *w, double now)
{
    if (!run_id) {
        sqlite3_stmt *st = prepare(w, "INSERT OR IGNORE INTO run(token, start_time) VALUES (?, ?)");
        if (!st) return -1;
        sqlite3_bind_text(st, 1, mp_run_token, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, now);
        int rc = step_done(w, st);
        sqlite3_finalize(st);
        if (rc) return -1;
        st = prepare(w, "SELECT id FROM run WHERE token = ?");
        if (!st) return -1;
        sqlite3_bind_text(st, 1, mp_run_token, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) run_id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (!run_id) return fail(w, "cannot create the run row");
    }
    sqlite3_stmt *st;
    if (!process_id) {
        char exe[4096] = "", cmdline[8192], host[256] = "";
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        read_cmdline(cmdline, sizeof cmdline);
        gethostname(host, sizeof host - 1);
        st = prepare(w, "INSERT INTO process(run, pid, ppid, exe, cmdline, host, start_time, end_time, settings)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
        if (!st) return -1;
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int64(st, 2, mp_pid);
        sqlite3_bind_int64(st, 3, getppid());
        sqlite3_bind_text(st, 4, exe, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, cmdline, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, host, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 7, mp_start_time);
        sqlite3_bind_double(st, 8, now);
        sqlite3_bind_text(st, 9, mp_opt.settings, -1, SQLITE_STATIC);
        int rc = step_done(w, st);
        sqlite3_finalize(st);
        if (rc) return -1;
        process_id = sqlite3_last_insert_rowid(w->db);
        return 0;
    }
    st = prepare(w, "UPDATE process SET end_time = ? WHERE id = ?");
    if (!st) return -1;
    sqlite3_bind_double(st, 1, now);
    sqlite3_bind_int64(st, 2, process_id);
    int rc = step_done(w, st);
    sqlite3_finalize(st);
    return rc;
}

static void thread_name(struct mp_thread *t, char *name, size_t size)
{
    if (atomic_load(&t->exited)) {
        snprintf(name, size, "%s", t->name);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, name, size - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0 && name[n - 1] == '\n') n--;
    name[n > 0 ? n : 0] = 0;
}

static int64_t thread_row(struct writer *w, struct mp_thread *t)
{
    if (grow_array(&thread_ids, &nthread_ids, t->seq + 1, sizeof *thread_ids)) return 0;
    char name[64];
    thread_name(t, name, sizeof name);
    sqlite3_stmt *st;
    if (thread_ids[t->seq]) {
        st = prepare(w, "UPDATE thread SET name = ? WHERE id = ? AND name != ?");
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, thread_ids[t->seq]);
        sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    } else {
        st = prepare(w, "INSERT INTO thread(process, seq, tid, name) VALUES (?, ?, ?, ?)");
        sqlite3_bind_int64(st, 1, process_id);
        sqlite3_bind_int64(st, 2, t->seq);
        sqlite3_bind_int64(st, 3, t->tid);
        sqlite3_bind_text(st, 4, name, -1, SQLITE_STATIC);
    }
    if (!st) return 0;
    int rc = step_done(w, st);
    sqlite3_finalize(st);
    if (rc) return 0;
    if (!thread_ids[t->seq]) thread_ids[t->seq] = sqlite3_last_insert_rowid(w->db);
    return thread_ids[t->seq];
}

/* Slot counters are fixed point (WEIGHT_ONE); rows hold whole numbers. */
static uint64_t whole(uint64_t fixed) { return (fixed + WEIGHT_ONE / 2) / WEIGHT_ONE; }

static struct written slot_values(const struct mp_slot *s)
{
    uint64_t memtot = LOAD(s->memtot);
    uint64_t freed = LOAD(s->freed) + atomic_load_explicit(&s->freed_remote, RELAXED);
    uint64_t maxlive = LOAD(s->maxlive);
    return (struct written){
        .ncalls = whole(LOAD(s->ncalls)),
        .memtot = whole(memtot),
        .nfree = whole(LOAD(s->nfree) + atomic_load_explicit(&s->nfree_remote, RELAXED)),
        .memlive = memtot > freed ? whole(memtot - freed) : 0,
        .maxlive = whole(maxlive),
    };
}

struct totals {
    uint64_t ncalls, memtot, nfree, memlive, maxlive, ncalls_nostack, memtot_nostack, nfree_unknown;
};

static int write_totals(struct writer *w, int64_t snapshot, int64_t thread, const struct totals *t)
{
    sqlite3_stmt *st = w->totals;
    sqlite3_bind_int64(st, 1, snapshot);
    sqlite3_bind_int64(st, 2, thread);
    const uint64_t v[] = { t->ncalls, t->memtot, t->nfree, t->memlive, t->maxlive,
                           t->ncalls_nostack, t->memtot_nostack, t->nfree_unknown };
    for (int i = 0; i < 8; i++) sqlite3_bind_int64(st, 3 + i, (int64_t)v[i]);
    return step_done(w, st);
}

/* Maps slot i to its database stack and thread, and to the canonical slot of
 * that row (itself if it is the first). */
static int map_slot(struct writer *w, uint32_t i)
{
    const struct mp_slot *s = slot_at(i);
    if (!s || !s->stack_id || !LOAD(s->thread_seq)) return 0;
    struct mp_thread *t = thread_by_seq(s->thread_seq);
    int64_t stack = stack_id_in_db(w, s->stack_id);
    int64_t thread = t && t->seq < nthread_ids && thread_ids[t->seq] ? thread_ids[t->seq] : t ? thread_row(w, t) : 0;
    if (!stack || !thread) return fail(w, "cannot write a stack");
    uint32_t c = node_get(&rows, (uint32_t)stack, s->thread_seq);
    if (!c) {
        if (node_put(&rows, (uint32_t)stack, s->thread_seq, i)) return fail(w, "out of memory");
        canon[i] = i;
    } else {
        canon[i] = c;
        alias_next[i] = alias_next[c];
        alias_next[c] = i;
    }
    return 0;
}

static const char *const reason_names[] = { "exit", "interval", "api", "signal", "exec", "signal" };

/* Everything of one snapshot, inside the open transaction. */
static int write_snapshot(struct writer *w, enum flush_reason reason, const char *label,
                          int64_t *nrows)
{
    double now = mp_now();
    if (write_process(w, now)) return -1;
    sqlite3_stmt *st = prepare(w, "INSERT INTO snapshot(process, seq, time, reason, label, profiler_memory)"
                                  " VALUES (?, ?, ?, ?, ?, ?)");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, process_id);
    sqlite3_bind_int64(st, 2, snapshot_seq + 1);
    sqlite3_bind_double(st, 3, now);
    sqlite3_bind_text(st, 4, reason_names[reason], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, label, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, (int64_t)mp_memory_used());
    int rc = step_done(w, st);
    sqlite3_finalize(st);
    if (rc) return -1;
    int64_t snapshot = sqlite3_last_insert_rowid(w->db);

    /* threads: exact totals from their own counters */
    struct totals process = { 0 };
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        struct totals tt = {
            .ncalls = LOAD(t->ncalls),
            .memtot = LOAD(t->alloc_bytes),
            .nfree = LOAD(t->nfree_local) + atomic_load(&t->nfree_remote),
            .maxlive = LOAD(t->peak),
            .nfree_unknown = LOAD(t->nfree_unknown),
        };
        uint64_t freed = LOAD(t->freed_local) + atomic_load(&t->freed_remote);
        tt.memlive = tt.memtot > freed ? tt.memtot - freed : 0;
        const struct mp_slot *ns = slot_at(t->nostack_slot);
        if (ns) tt.ncalls_nostack = whole(LOAD(ns->ncalls)), tt.memtot_nostack = whole(LOAD(ns->memtot));
        if (!tt.ncalls && !tt.nfree && !tt.nfree_unknown) continue;
        int64_t tid = thread_row(w, t);
        if (!tid || write_totals(w, snapshot, tid, &tt)) return -1;
        process.ncalls += tt.ncalls, process.memtot += tt.memtot, process.nfree += tt.nfree;
        process.memlive += tt.memlive, process.nfree_unknown += tt.nfree_unknown;
        process.ncalls_nostack += tt.ncalls_nostack, process.memtot_nostack += tt.memtot_nostack;
    }
    int64_t peak = process_peak();
    process.maxlive = peak > (int64_t)process.memlive ? (uint64_t)peak : process.memlive;
    if (write_totals(w, snapshot, 0, &process)) return -1;

    /* samples: the rows whose values changed since the previous snapshot */
    uint32_t limit = slot_limit();
    if (grow_array(&prev, &nprev, limit, sizeof *prev) || grow_array(&canon, &ncanon, limit, sizeof *canon) ||
        grow_array(&alias_next, &nalias, limit, sizeof *alias_next))
        return fail(w, "out of memory");
    /* each node not mapped yet adds a database node or more (inline levels:
     * a quarter more is allowed for, past that the map grows by half) */
    size_t unmapped = stack_node_count() - nmapped;
    if (node_reserve(&nodes, unmapped + unmapped / 4)) return fail(w, "out of memory");
    for (uint32_t i = 1; i < limit; i++)
        if (!canon[i] && map_slot(w, i)) return -1;
    for (uint32_t i = 1; i < limit; i++) {
        if (canon[i] != i) continue;
        const struct mp_slot *s = slot_at(i);
        struct written v = slot_values(s);
        for (uint32_t j = alias_next[i]; j; j = alias_next[j]) {
            struct written a = slot_values(slot_at(j));
            v.ncalls += a.ncalls, v.memtot += a.memtot, v.nfree += a.nfree;
            v.memlive += a.memlive, v.maxlive += a.maxlive;
        }
        if (!memcmp(&v, &prev[i], sizeof v)) continue;
        const int64_t row[] = { snapshot, stack_id_in_db(w, s->stack_id), thread_ids[s->thread_seq],
                                (int64_t)v.ncalls, (int64_t)v.memtot, (int64_t)v.nfree,
                                (int64_t)v.memlive, (int64_t)v.maxlive };
        if (batch_add(w, &w->samples, row)) return -1;
        prev[i] = v;
        ++*nrows;
    }
    if (batch_flush(w, &w->stacks) || batch_flush(w, &w->samples)) return -1;
    snapshot_seq++;
    return 0;
}

static int open_writer(struct writer *w)
{
    if (sqlite3_open_v2(mp_opt.out, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return fail(w, w->db ? sqlite3_errmsg(w->db) : "cannot open");
    if (db_harden(w->db, 0)) return fail(w, sqlite3_errmsg(w->db));
    sqlite3_busy_timeout(w->db, 300 * 1000);    /* other processes of the run */
    if (exec(w, "PRAGMA synchronous = NORMAL") || exec(w, "BEGIN IMMEDIATE")) return -1;
    if (ensure_schema(w) || sync_mirrors(w)) return -1;
    static const char *const ins[ND] = {
        [D_MODULE] = "INSERT INTO module(id, path, build_id) VALUES (?, ?, ?)",
        [D_FUNCTION] = "INSERT INTO function(id, name) VALUES (?, ?)",
        [D_FILE] = "INSERT INTO file(id, path) VALUES (?, ?)",
        [D_FRAME] = "INSERT INTO frame(id, module, offset, inline_depth, function, file, line)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
    };
    for (int d = 0; d < D_STACK; d++)
        if (!(w->ins[d] = prepare(w, ins[d]))) return -1;
    w->totals = prepare(w, "INSERT INTO totals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!w->totals || batch_prepare(w, &w->stacks, "stack", 3) || batch_prepare(w, &w->samples, "sample", 8))
        return -1;
    return 0;
}

static void close_writer(struct writer *w)
{
    for (int d = 0; d < ND; d++) sqlite3_finalize(w->ins[d]);
    sqlite3_finalize(w->stacks.many);
    sqlite3_finalize(w->stacks.one);
    sqlite3_finalize(w->samples.many);
    sqlite3_finalize(w->samples.one);
    sqlite3_finalize(w->totals);
    sqlite3_close(w->db);
}

/* ------------------------------------------------------------ entry */

int flush_snapshot(enum flush_reason reason, const char *label)
{
    if (!atomic_load(&mp_initialized)) return -1;
    int saved_errno = errno, saved = guard_enter();
    sigset_t mask;
    signals_hold(&mask);
    flush_lock();
    if (!mp_pid) mp_pid = getpid();
    if (getpid() != mp_pid) {       /* a vfork child shares our memory: not ours to write */
        flush_unlock();
        signals_release(&mask);
        guard_leave(saved);
        return -1;
    }
    double t0 = mp_now();
    size_t naddrs = symbols_resolve_pending();
    double resolve_s = mp_now() - t0;
    struct writer w = { 0 };
    int64_t nrows = 0;
    int rc = open_writer(&w);
    if (!rc) rc = write_snapshot(&w, reason, label, &nrows);
    if (!rc) rc = exec(&w, "COMMIT");
    if (rc) {
        if (w.db) sqlite3_exec(w.db, "ROLLBACK", NULL, NULL, NULL);
        mp_log("error", "cannot write %s: %s (snapshot lost)", mp_opt.out,
               w.error ? w.error : "unknown error");
        forget_database();
    }
    close_writer(&w);
    if (!rc && reason != FLUSH_INTERVAL)
        mp_log("info", "wrote %s: %u stacks, %lld rows, %s snapshot, %zu new addresses "
               "resolved in %.3f s, %.3f s", mp_opt.out, stacks_count(), (long long)nrows,
               reason_names[reason], naddrs, resolve_s, mp_now() - t0);
    flush_unlock();
    signals_release(&mask);
    guard_leave(saved);
    errno = saved_errno;
    return rc ? -1 : 0;
}
