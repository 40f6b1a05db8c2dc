/* fleetgen: profiles of a fleet of services, as the recorder writes them
 * with MP_INTERVAL, for tests/bench/fleet.sh (mpquery push --follow at
 * fleet scale) without running 1,000 programs. Each process is one file
 * DIR/svcE-PID.db made from schema/profile.sql (build/schema.h) and
 * filled through common/format.h's INSERTs, as the recorder fills its
 * files: the same tables, columns and version, so mpquery reads them as
 * it reads real ones.
 *
 * The fleet: PROCS processes of EXES executables on HOSTS hosts, each
 * writing a snapshot every INTERVAL seconds from START (each process
 * starting at its own phase within the interval, so the snapshots are
 * spread over time), ROWS changed (stack, thread) rows per snapshot (a
 * few of them hot, most of them once in a while), totals per thread.
 * Stacks come from one pool of STACKS shared by every process (their
 * frames in the same modules at the same offsets: ClickHouse stores each
 * once); an executable uses a window of the pool that overlaps its
 * neighbours'. Everything follows from the arguments: the same command
 * writes the same rows.
 *
 * Usage: fleetgen DIR PROCS FROM UPTO [START [INTERVAL [ROWS [STACKS [EXES [HOSTS]]]]]]
 * writes snapshots FROM..UPTO (1-based) of each process: FROM = 1 creates
 * the files, a later FROM appends to them (one transaction per file). */
#include "format.h"
#include "stack_run.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char schema_sql[] =
#include "schema.h"
;

enum { THREADS = 4, MAX_DEPTH = 16, KEYS_PER_STACK = 2 };

struct fleet {
    const char *dir;
    int procs, from, upto, rows, stacks, exes, hosts;
    double start, interval;
};

/* One (stack, thread) of a process: its cumulative counters. */
struct key { int stack, thread; int64_t ncalls, memtot, nfree, memlive, maxlive; };

struct proc {
    int index, exe, pid, nkeys;
    struct key *keys;
    sqlite3 *db;
    sqlite3_stmt *snapshot, *sample, *totals;
    int64_t *stack_id;                  /* per pool stack: its leaf node in this file (0: none) */
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ x >> 33;
}

static void die(const char *what, sqlite3 *db)
{
    fprintf(stderr, "fleetgen: %s%s%s\n", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) die(sql, db);
}

/* Every column 0 until bound (the format's columns are NOT NULL, most
 * with DEFAULT 0, which an INSERT of every column does not apply). */
static void zero(sqlite3_stmt *st)
{
    for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) sqlite3_bind_int64(st, i, 0);
}

static sqlite3_stmt *insert(sqlite3 *db, enum format_table t)
{
    char sql[FORMAT_INSERT_SIZE(1)];
    sqlite3_stmt *st;
    if (format_insert_sql("INSERT", t, 1, sql, sizeof sql) < 0) die("statement too long", NULL);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) die(sql, db);
    zero(st);
    return st;
}

static void step(sqlite3 *db, sqlite3_stmt *st)
{
    if (sqlite3_step(st) != SQLITE_DONE) die("insert", db);
    sqlite3_reset(st);
    zero(st);
}

/* ---------------------------------------------------------------- the pool */
/* Pool stack k: depth 6..MAX_DEPTH, its frames outermost first. Stacks
 * k and k ^ 1 differ only in their leaf, k / 4 share all but the last
 * two frames: the prefix tree of a real program. Frame j of stack k is
 * (module, offset): offset = the function's, in module 1 (main), 2
 * (libsvc.so) or 3 (libstdc++). */
static int stack_depth(int k) { return 6 + (int)(mix((uint64_t)k / 4 + 7) % (MAX_DEPTH - 5)); }

static int frame_function(int k, int j, int depth)
{
    int shift = depth - 1 - j;                   /* 0: the leaf */
    uint64_t prefix = shift >= 2 ? (uint64_t)k >> (shift + 1) : (uint64_t)k >> shift;
    return (int)(mix(prefix * 131 + (uint64_t)j) % 4000) + 1;
}

static void write_dictionaries(sqlite3 *db, int exe)
{
    sqlite3_stmt *mod = insert(db, FT_module), *fn = insert(db, FT_function), *fr = insert(db, FT_frame);
    char path[64], bid[64], name[80];
    for (int m = 1; m <= 3; m++) {
        if (m == 1) snprintf(path, sizeof path, "/usr/bin/svc%d", exe);
        else snprintf(path, sizeof path, "%s", m == 2 ? "/usr/lib/libsvc.so.1" : "/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
        snprintf(bid, sizeof bid, "%016llx", (unsigned long long)mix((uint64_t)(m == 1 ? 100 + exe : m)));
        sqlite3_bind_int64(mod, FORMAT_PARAM(module, id), m);
        sqlite3_bind_text(mod, FORMAT_PARAM(module, path), path, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(mod, FORMAT_PARAM(module, build_id), bid, -1, SQLITE_TRANSIENT);
        step(db, mod);
    }
    /* one frame per function: functions 1..4000, a tenth of them in main */
    for (int f = 1; f <= 4000; f++) {
        int m = f % 10 == 0 ? 1 : f % 3 == 0 ? 3 : 2;
        snprintf(name, sizeof name, m == 3 ? "std::vector<svc::item%d>::_M_realloc_insert" : "svc::layer%d::handle(request&)", f);
        sqlite3_bind_int64(fn, FORMAT_PARAM(function, id), f);
        sqlite3_bind_text(fn, FORMAT_PARAM(function, name), name, -1, SQLITE_TRANSIENT);
        step(db, fn);
        sqlite3_bind_int64(fr, FORMAT_PARAM(frame, id), f);
        sqlite3_bind_int64(fr, FORMAT_PARAM(frame, module), m);
        sqlite3_bind_int64(fr, FORMAT_PARAM(frame, offset), 0x1000 + 64 * (int64_t)f);
        sqlite3_bind_int64(fr, FORMAT_PARAM(frame, function), f);
        sqlite3_bind_null(fr, FORMAT_PARAM(frame, file));
        step(db, fr);
    }
    sqlite3_finalize(mod); sqlite3_finalize(fn); sqlite3_finalize(fr);
}

/* ---------------------------------------------------------------- a process */
/* Pool stack k's leaf node in p's file: the nodes of its path made when
 * missing (the stack table is a prefix tree; ids in order of creation). */
struct nodes { uint64_t *key; int64_t *id; size_t cap, n; struct stack_run run; };

/* The pending run of nodes into stack_run (format 6: the tree as runs). */
static void run_write(struct nodes *t, sqlite3 *db, sqlite3_stmt *st)
{
    size_t len;
    const char *frames = stack_run_take(&t->run, &len);
    if (!frames) return;
    sqlite3_bind_int64(st, FORMAT_PARAM(stack_run, id), t->run.first);
    sqlite3_bind_int64(st, FORMAT_PARAM(stack_run, parent), t->run.parent);
    sqlite3_bind_text(st, FORMAT_PARAM(stack_run, frames), frames, (int)len, SQLITE_TRANSIENT);
    step(db, st);
}

static int64_t node(struct nodes *t, sqlite3 *db, sqlite3_stmt *st, int64_t parent, int frame)
{
    uint64_t k = (uint64_t)parent << 20 | (uint64_t)frame;
    size_t i = mix(k) & (t->cap - 1);
    while (t->key[i] && t->key[i] != k + 1) i = (i + 1) & (t->cap - 1);
    if (t->key[i]) return t->id[i];
    t->key[i] = k + 1;
    t->id[i] = (int64_t)++t->n;
    if (!st) return t->id[i];           /* appending: the file has it */
    if (!stack_run_extends(&t->run, t->id[i], parent)) run_write(t, db, st);
    if (stack_run_push(&t->run, t->id[i], parent, frame)) die("out of memory", db);
    return t->id[i];
}

/* Process p's stacks and keys: a window of 2 * STACKS / EXES pool stacks
 * starting at its executable's place, each on KEYS_PER_STACK threads. */
static void make_keys(const struct fleet *F, struct proc *p, int write)
{
    int window = 2 * F->stacks / F->exes, first = p->exe * F->stacks / F->exes;
    struct nodes t = { .cap = 1u << 16 };
    t.key = calloc(t.cap, sizeof *t.key);
    t.id = calloc(t.cap, sizeof *t.id);
    sqlite3_stmt *st = write ? insert(p->db, FT_stack_run) : NULL;
    p->nkeys = 0;
    p->keys = calloc((size_t)window * KEYS_PER_STACK, sizeof *p->keys);
    p->stack_id = calloc((size_t)F->stacks, sizeof *p->stack_id);
    for (int w = 0; w < window; w++) {
        int k = (first + w) % F->stacks, depth = stack_depth(k);
        int64_t parent = 0;
        size_t before = t.n;
        for (int j = 0; j < depth; j++) parent = node(&t, p->db, st, parent, frame_function(k, j, depth));
        if (t.n == before) continue;    /* the path of another pool stack */
        p->stack_id[k] = parent;
        for (int c = 0; c < KEYS_PER_STACK; c++)
            p->keys[p->nkeys++] = (struct key){ .stack = k, .thread = 1 + (w + c) % THREADS };
    }
    if (st) run_write(&t, p->db, st), sqlite3_finalize(st);
    stack_run_free(&t.run);
    free(t.key);
    free(t.id);
}

static double snapshot_time(const struct fleet *F, const struct proc *p, int seq)
{
    return F->start + F->interval * ((double)p->index / F->procs + seq - 1);
}

/* Creates p's file: schema, run, process, threads, dictionaries, stacks. */
static void create_file(const struct fleet *F, struct proc *p)
{
    char sql[512];
    exec(p->db, schema_sql);
    exec(p->db, "BEGIN");
    snprintf(sql, sizeof sql, "INSERT INTO run (id, token, start_time) VALUES (1, 'fleet-%d-%d', %.6f)", p->index,
             p->pid, snapshot_time(F, p, 1) - 1);
    exec(p->db, sql);
    sqlite3_stmt *pr = insert(p->db, FT_process), *th = insert(p->db, FT_thread);
    char exe[64], cmd[128], host[64];
    snprintf(exe, sizeof exe, "/usr/bin/svc%d", p->exe);
    snprintf(cmd, sizeof cmd, "svc%d --port %d", p->exe, 8000 + p->index);
    snprintf(host, sizeof host, "host%03d", p->index % F->hosts);
    sqlite3_bind_int64(pr, FORMAT_PARAM(process, id), 1);
    sqlite3_bind_int64(pr, FORMAT_PARAM(process, run), 1);
    sqlite3_bind_int64(pr, FORMAT_PARAM(process, pid), p->pid);
    sqlite3_bind_int64(pr, FORMAT_PARAM(process, ppid), 1);
    sqlite3_bind_text(pr, FORMAT_PARAM(process, exe), exe, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(pr, FORMAT_PARAM(process, cmdline), cmd, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(pr, FORMAT_PARAM(process, host), host, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(pr, FORMAT_PARAM(process, start_time), snapshot_time(F, p, 1) - 1);
    sqlite3_bind_text(pr, FORMAT_PARAM(process, settings), "MP_INTERVAL=10 MP_DEPTH=128", -1, SQLITE_STATIC);
    sqlite3_bind_text(pr, FORMAT_PARAM(process, ended), "", -1, SQLITE_STATIC);
    step(p->db, pr);
    for (int t = 1; t <= THREADS; t++) {
        sqlite3_bind_int64(th, FORMAT_PARAM(thread, id), t);
        sqlite3_bind_int64(th, FORMAT_PARAM(thread, process), 1);
        sqlite3_bind_int64(th, FORMAT_PARAM(thread, seq), t);
        sqlite3_bind_int64(th, FORMAT_PARAM(thread, tid), p->pid + t - 1);
        sqlite3_bind_text(th, FORMAT_PARAM(thread, name), t == 1 ? "main" : "worker", -1, SQLITE_STATIC);
        step(p->db, th);
    }
    sqlite3_finalize(pr);
    sqlite3_finalize(th);
    write_dictionaries(p->db, p->exe);
}

/* ---------------------------------------------------------------- the snapshots */
/* The allocations of key k in snapshot seq: a key is hot (every
 * snapshot) or cold; a tenth of the stacks leak a block now and then. */
static void allocate(struct key *k, uint64_t r)
{
    int64_t size = 16 << (k->stack % 10), n = 1 + (int64_t)(r % 40);
    int64_t freed = k->stack % 10 == 3 && r % 3 == 0 ? n - 1 : n;
    k->ncalls += n, k->memtot += n * size, k->nfree += freed;
    k->memlive += (n - freed) * size;
    if (k->memlive + size > k->maxlive) k->maxlive = k->memlive + size;
}

static void write_sample(struct proc *p, const struct key *k, int64_t snapshot)
{
    sqlite3_stmt *st = p->sample;
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, snapshot), snapshot);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, stack), p->stack_id[k->stack]);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, thread), k->thread);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, ncalls), k->ncalls);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, memtot), k->memtot);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, nfree), k->nfree);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, memlive), k->memlive);
    sqlite3_bind_int64(st, FORMAT_PARAM(sample, maxlive), k->maxlive);
    step(p->db, st);
}

/* Per thread (0: the process) the sums of its keys, as the totals rows. */
static void write_totals(const struct fleet *F, struct proc *p, int64_t snapshot)
{
    (void)F;
    int64_t sum[THREADS + 1][5] = { { 0 } };
    for (int i = 0; i < p->nkeys; i++) {
        const struct key *k = &p->keys[i];
        int64_t v[5] = { k->ncalls, k->memtot, k->nfree, k->memlive, k->maxlive };
        for (int c = 0; c < 5; c++) sum[k->thread][c] += v[c], sum[0][c] += v[c];
    }
    for (int t = 0; t <= THREADS; t++) {
        sqlite3_stmt *st = p->totals;
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, snapshot), snapshot);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, thread), t);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, ncalls), sum[t][0]);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, memtot), sum[t][1]);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, nfree), sum[t][2]);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, memlive), sum[t][3]);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, maxlive), sum[t][4]);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, ncalls_nostack), 0);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, memtot_nostack), 0);
        sqlite3_bind_int64(st, FORMAT_PARAM(totals, nfree_unknown), 0);
        step(p->db, st);
    }
}

/* Snapshot seq of p: ROWS keys change (the first ROWS / 4 of its keys
 * every time, the others at random); written when write is set. The
 * rows go in key order, each key once. */
static void snapshot(const struct fleet *F, struct proc *p, int seq, int write)
{
    unsigned char *changed = calloc((size_t)p->nkeys, 1);
    int hot = F->rows / 4;
    for (int i = 0; i < hot && i < p->nkeys; i++) changed[i] = 1;
    for (int r = hot; r < F->rows; r++)
        changed[mix((uint64_t)p->pid << 32 | (uint64_t)seq << 12 | (uint64_t)r) % (uint64_t)p->nkeys] = 1;
    for (int i = 0; i < p->nkeys; i++)
        if (changed[i]) allocate(&p->keys[i], mix((uint64_t)p->pid * 7919 + (uint64_t)seq * 104729 + (uint64_t)i));
    if (write) {
        sqlite3_stmt *st = p->snapshot;
        sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, id), seq);
        sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, process), 1);
        sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, seq), seq);
        sqlite3_bind_double(st, FORMAT_PARAM(snapshot, time), snapshot_time(F, p, seq));
        sqlite3_bind_text(st, FORMAT_PARAM(snapshot, reason), "interval", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, profiler_memory), 4 << 20);
        step(p->db, st);
        for (int i = 0; i < p->nkeys; i++)
            if (changed[i]) write_sample(p, &p->keys[i], seq);
        write_totals(F, p, seq);
    }
    free(changed);
}

static void process(const struct fleet *F, int index)
{
    struct proc p = { .index = index, .exe = index % F->exes, .pid = 10000 + index };
    char path[4096];
    snprintf(path, sizeof path, "%s/svc%d-%d.db", F->dir, p.exe, p.pid);
    if (F->from == 1) remove(path);
    if (sqlite3_open(path, &p.db) != SQLITE_OK) die(path, p.db);
    sqlite3_busy_timeout(p.db, 10000);  /* as the recorder: a reader (the agent's copy) may hold it */
    exec(p.db, "PRAGMA synchronous = OFF");
    if (F->from == 1) create_file(F, &p);
    else exec(p.db, "BEGIN");
    make_keys(F, &p, F->from == 1);
    p.snapshot = insert(p.db, FT_snapshot);
    p.sample = insert(p.db, FT_sample);
    p.totals = insert(p.db, FT_totals);
    for (int seq = 1; seq <= F->upto; seq++) snapshot(F, &p, seq, seq >= F->from);
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE process SET end_time = %.6f WHERE id = 1", snapshot_time(F, &p, F->upto));
    exec(p.db, sql);
    exec(p.db, "COMMIT");
    sqlite3_finalize(p.snapshot); sqlite3_finalize(p.sample); sqlite3_finalize(p.totals);
    if (sqlite3_close(p.db) != SQLITE_OK) die(path, p.db);
    free(p.keys);
    free(p.stack_id);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: fleetgen DIR PROCS FROM UPTO [START [INTERVAL [ROWS [STACKS [EXES [HOSTS]]]]]]\n");
        return 2;
    }
    struct fleet F = { .dir = argv[1], .procs = atoi(argv[2]), .from = atoi(argv[3]), .upto = atoi(argv[4]),
                       .start = argc > 5 ? atof(argv[5]) : 1.7e9, .interval = argc > 6 ? atof(argv[6]) : 10,
                       .rows = argc > 7 ? atoi(argv[7]) : 300, .stacks = argc > 8 ? atoi(argv[8]) : 3000,
                       .exes = argc > 9 ? atoi(argv[9]) : 10, .hosts = argc > 10 ? atoi(argv[10]) : 100 };
    if (F.procs < 1 || F.from < 1 || F.upto < F.from || F.rows < 4 || F.exes < 1 || F.hosts < 1 ||
        F.stacks < 2 * F.exes || F.rows > 2 * KEYS_PER_STACK * F.stacks / F.exes || F.interval <= 0) {
        fprintf(stderr, "fleetgen: bad arguments\n");
        return 2;
    }
    for (int i = 0; i < F.procs; i++) process(&F, i);
    return 0;
}
