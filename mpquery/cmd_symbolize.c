/* mpquery symbolize DB: resolves the profile's frames again from the
 * modules on disk (recorded path and build-id, offset), e.g. after debug
 * info was installed, with the recorder's own resolution (prof/resolve.c).
 * The one command that writes to its database: one transaction, all or
 * nothing.
 *
 * An address whose inline chain changes length changes the stacks through
 * it (a stack holds one frame per inline level), so then the stack tree is
 * rebuilt: each old node maps to the path of re-resolved addresses leading
 * to it, new nodes get ids above the old ones (sample rows are moved with
 * one UPDATE, which never collides with an old id), and frames no longer
 * used are deleted. Otherwise frames are updated in place and ids stay. */
#include "mpquery.h"
#include "resolve.h"

#include <errno.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
"usage: mpquery symbolize DB [options]\n"
"\n"
"Names DB's frames again from the modules on disk, as the recorder does\n"
"(symbol tables, separate debug info by build-id and debuglink, DWARF lines\n"
"and inline chains): for profiles of stripped programs once their debug info\n"
"is installed, or recorded with MP_DEBUGINFO_PATH unset. DB is updated in\n"
"one transaction; no profiled program may be writing to it meanwhile.\n"
"\n"
"A module whose file now has another build-id than the one recorded is\n"
"refused: nothing is written (exit 2). A module whose file is gone keeps\n"
"its names (said on stderr).\n"
"\n"
"  --debuginfo-path P  where separate debug info is looked for (elfutils'\n"
"                      format; default \":.debug:/usr/lib/debug\")\n"
"  --skip-mismatched   leave modules with another build-id as they are and\n"
"                      resolve the others\n"
"  --dry-run           resolve and report, write nothing\n"
"\n"
"example:\n"
"  apt-get install python3.11-dbgsym && mpquery symbolize py.db\n";

enum { OPT_SKIP_MISMATCHED = 512, OPT_DRY_RUN };
static const struct option long_options[] = {
    { "debuginfo-path", required_argument, NULL, OPT_DEBUGINFO },
    { "skip-mismatched", no_argument, NULL, OPT_SKIP_MISMATCHED },
    { "dry-run", no_argument, NULL, OPT_DRY_RUN },
    { "help", no_argument, NULL, OPT_HELP },
    { 0 }
};

/* One row of the frame table, sorted by (module, offset, inline_depth): the
 * rows of one address are consecutive. */
struct frow {
    int64_t id, module, offset, function, file;     /* function, file: 0 = NULL */
    int depth, line;
    int64_t addr;                                    /* index into addrs */
};

/* One distinct (module, offset) and its frames after resolution. */
struct addr {
    size_t first, nold;             /* its rows in frows */
    int nnew;                       /* frames after resolution; 0 = unchanged */
    int64_t *ids;                   /* nnew frame ids (existing rows reused) */
};

struct sym {
    sqlite3 *db;
    const char *path;
    struct frow *frows; size_t nframes;
    struct addr *addrs; size_t naddrs;
    struct idmap frame_ix;          /* frame id → index in frows */
    struct strtab names;            /* function and file names seen */
    struct idmap fn_id, file_id;    /* strtab index → database id */
    int64_t max_function, max_file, max_frame;
    size_t resolved, changed, kept, gained_names, gained_lines, new_frames;
};

static int sql_fail(struct sym *s, const char *what)
{
    return error(EXIT_FAILED, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static int exec(struct sym *s, const char *sql)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_fail(s, sql);
}

static int64_t max_id(struct sym *s, const char *table)
{
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(id), 0) FROM %s", table);
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Loads a name table (function or file) into names and its id map. */
static int load_names(struct sym *s, const char *sql, struct idmap *ids)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(s, sql);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (!name) continue;
        uint32_t ix = strtab_intern(&s->names, name, strlen(name));
        int created;
        uint32_t *v = idmap_put(ids, ix, &created);
        if (created) *v = (uint32_t)sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sql_fail(s, sql);
}

static int load_frames(struct sym *s)
{
    static const char sql[] = "SELECT id, module, offset, inline_depth, COALESCE(function, 0), "
                              "COALESCE(file, 0), line FROM frame ORDER BY module, offset, inline_depth";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(s, sql);
    size_t cap = 1024;
    s->frows = xmalloc(cap * sizeof *s->frows);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (s->nframes == cap) s->frows = xrealloc(s->frows, (cap *= 2) * sizeof *s->frows);
        struct frow *f = &s->frows[s->nframes++];
        f->id = sqlite3_column_int64(st, 0);
        f->module = sqlite3_column_int64(st, 1);
        f->offset = sqlite3_column_int64(st, 2);
        f->depth = sqlite3_column_int(st, 3);
        f->function = sqlite3_column_int64(st, 4);
        f->file = sqlite3_column_int64(st, 5);
        f->line = sqlite3_column_int(st, 6);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sql_fail(s, sql);
    idmap_init(&s->frame_ix, s->nframes);
    s->addrs = xcalloc(s->nframes + 1, sizeof *s->addrs);
    for (size_t i = 0; i < s->nframes; i++) {
        struct frow *f = &s->frows[i];
        int created;
        *idmap_put(&s->frame_ix, (uint64_t)f->id, &created) = (uint32_t)i;
        if (i == 0 || f->module != f[-1].module || f->offset != f[-1].offset)
            s->addrs[s->naddrs++].first = i;
        f->addr = (int64_t)s->naddrs - 1;
        s->addrs[s->naddrs - 1].nold++;
    }
    return 0;
}

/* The database id of a function or file name, inserting it when new. */
static int name_id(struct sym *s, const char *name, int is_file, int64_t *out)
{
    *out = 0;
    if (!name) return 0;
    uint32_t ix = strtab_intern(&s->names, name, strlen(name));
    int created;
    uint32_t *v = idmap_put(is_file ? &s->file_id : &s->fn_id, ix, &created);
    if (!created) {
        *out = *v;
        return 0;
    }
    int64_t id = is_file ? ++s->max_file : ++s->max_function;
    *v = (uint32_t)id;
    *out = id;
    sqlite3_stmt *st;
    const char *sql = is_file ? "INSERT INTO file(id, path) VALUES(?, ?)"
                              : "INSERT INTO function(id, name) VALUES(?, ?)";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(s, sql);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sql_fail(s, sql);
}

/* Writes the resolved chain of address a: existing rows updated where they
 * differ, missing depths inserted. */
static int store_chain(struct sym *s, struct addr *a, const struct sym_frame *chain, int n,
                       sqlite3_stmt *upd, sqlite3_stmt *ins)
{
    const struct frow *first = &s->frows[a->first];
    /* never lose what was known (debug info found when recording and not
     * now): a chain that names fewer functions and lines is not taken */
    int known_old = 0, known_new = 0;
    for (size_t d = 0; d < a->nold; d++)
        known_old += (s->frows[a->first + d].function != 0) + (s->frows[a->first + d].line != 0);
    for (int d = 0; d < n; d++) known_new += (chain[d].function != NULL) + (chain[d].line != 0);
    if (known_new < known_old) {
        s->kept++;
        return 0;
    }
    int changed = n != (int)a->nold;
    a->ids = xmalloc((size_t)n * sizeof *a->ids);
    a->nnew = n;
    for (int d = 0; d < n; d++) {
        int64_t fn, file;
        if (name_id(s, chain[d].function, 0, &fn) || name_id(s, chain[d].file, 1, &file)) return EXIT_FAILED;
        const struct frow *old = d < (int)a->nold ? &s->frows[a->first + d] : NULL;
        if (old && old->depth != d) old = NULL;     /* a gap in the old depths */
        if (old && old->function == fn && old->file == file && old->line == chain[d].line) {
            a->ids[d] = old->id;
            continue;
        }
        changed = 1;
        if (old) {
            if (!old->function && fn) s->gained_names++;
            if (!old->line && chain[d].line) s->gained_lines++;
        } else {
            s->new_frames++;
        }
        sqlite3_stmt *st = old ? upd : ins;
        a->ids[d] = old ? old->id : ++s->max_frame;
        sqlite3_reset(st);
        if (fn) sqlite3_bind_int64(st, 1, fn); else sqlite3_bind_null(st, 1);
        if (file) sqlite3_bind_int64(st, 2, file); else sqlite3_bind_null(st, 2);
        sqlite3_bind_int(st, 3, chain[d].line);
        sqlite3_bind_int64(st, 4, a->ids[d]);
        if (!old) {
            sqlite3_bind_int64(st, 5, first->module);
            sqlite3_bind_int64(st, 6, first->offset);
            sqlite3_bind_int(st, 7, d);
        }
        if (sqlite3_step(st) != SQLITE_DONE) return sql_fail(s, "writing frames");
    }
    if (changed) s->changed++;
    return 0;
}

/* Debug info from this machine's disk only, as in the recorder (never a
 * debuginfod server). */
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = resolve_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &resolve_debuginfo_path,
};

/* Resolves every address of one module. Returns 0, or EXIT_BAD_INPUT for a
 * build-id mismatch (unless skipped), EXIT_FAILED for a database error. */
static int symbolize_module(struct sym *s, int64_t module, const char *path, const char *build_id,
                            int skip_mismatched, size_t *nmodules)
{
    Dwfl *d = dwfl_begin(&offline_callbacks);
    if (!d) return error(EXIT_FAILED, "libdwfl: %s", dwfl_errmsg(-1));
    int rc = 0;
    Dwfl_Module *m = dwfl_report_elf(d, path, path, -1, 0, 0);
    dwfl_report_end(d, NULL, NULL);
    if (!m) {
        warning("symbolize: %s: %s; its frames keep their names", path,
                access(path, R_OK) ? strerror(errno) : dwfl_errmsg(-1));
        goto out;
    }
    const char *disk_path, *disk_id;
    GElf_Addr bias;
    resolve_module(m, &disk_path, &disk_id, &bias);
    if (strcmp(disk_id, build_id) != 0) {
        if (skip_mismatched) {
            warning("symbolize: %s: build-id %s on disk, %s recorded; skipped", path,
                    *disk_id ? disk_id : "(none)", *build_id ? build_id : "(none)");
        } else {
            rc = error(EXIT_BAD_INPUT, "symbolize: %s: build-id %s on disk, %s recorded: not the file "
                       "that was profiled; nothing written (--skip-mismatched resolves the others)",
                       path, *disk_id ? disk_id : "(none)", *build_id ? build_id : "(none)");
        }
        goto out;
    }
    (*nmodules)++;
    sqlite3_stmt *upd = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(s->db, "UPDATE frame SET function = ?1, file = ?2, line = ?3 WHERE id = ?4",
                           -1, &upd, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO frame(function, file, line, id, module, offset, inline_depth) "
                           "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &ins, NULL) != SQLITE_OK) {
        rc = sql_fail(s, "preparing frame statements");
    }
    for (size_t i = 0; i < s->naddrs && !rc; i++) {
        struct addr *a = &s->addrs[i];
        const struct frow *f = &s->frows[a->first];
        if (f->module != module) continue;
        struct sym_frame chain[RES_MAX_INLINE];
        int n = resolve_chain(m, (Dwarf_Addr)f->offset + bias, chain);
        s->resolved++;
        rc = store_chain(s, a, chain, n, upd, ins);
    }
    sqlite3_finalize(upd);
    sqlite3_finalize(ins);
out:
    dwfl_end(d);
    return rc;
}

/* ---------------------------------------------------------------- stack tree */

struct node { int64_t id, parent, frame; };

struct tree {
    struct node *old; size_t nold;
    struct idmap old_ix;            /* old id → index */
    int64_t *group_end;             /* per old node: new id of its address's last frame */
    int64_t *group_parent;          /* per old node: new id its address hangs from */
    struct node *new; size_t nnew, cap;
    struct idmap new_ix;            /* (parent, frame) → new id - base */
    int64_t base;
};

/* The new node (parent, frame), made when new. Ids fit in 32 bits (checked
 * by rebuild_stacks), so the pair is an exact 64-bit key. */
static int64_t new_node(struct tree *t, int64_t parent, int64_t frame)
{
    int created;
    uint32_t *v = idmap_put(&t->new_ix, (uint64_t)parent << 32 | (uint64_t)frame, &created);
    if (!created) return t->new[*v].id;
    if (t->nnew == t->cap) t->new = xrealloc(t->new, (t->cap = t->cap ? t->cap * 2 : 4096) * sizeof *t->new);
    *v = (uint32_t)t->nnew;
    t->new[t->nnew] = (struct node){ t->base + (int64_t)t->nnew + 1, parent, frame };
    return t->new[t->nnew++].id;
}

static uint32_t frame_index(const struct sym *s, int64_t id)
{
    return idmap_get(&s->frame_ix, (uint64_t)id);
}

/* Sets group_end of old node i and of its ancestors that lack one (from the
 * root down, iteratively: stacks can be thousands deep). -1 when the table
 * is not a tree (a dangling parent or frame, a cycle). */
static int resolve_node(struct sym *s, struct tree *t, uint32_t i)
{
    uint32_t *todo = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t j = i; !t->group_end[j];) {
        if (n == cap) todo = xrealloc(todo, (cap = cap ? cap * 2 : 64) * sizeof *todo);
        todo[n++] = j;
        if (n > t->nold || !t->old[j].parent) break;
        j = idmap_get(&t->old_ix, (uint64_t)t->old[j].parent);
        if (j == NONE) n = t->nold + 1;
    }
    int rc = n > t->nold ? -1 : 0;
    while (n > 0 && !rc) {
        uint32_t j = todo[--n];
        const struct node *o = &t->old[j];
        uint32_t pi = o->parent ? idmap_get(&t->old_ix, (uint64_t)o->parent) : NONE;
        uint32_t fi = frame_index(s, o->frame);
        uint32_t pfi = pi != NONE ? frame_index(s, t->old[pi].frame) : NONE;
        if (fi == NONE || (pi != NONE && pfi == NONE)) {
            rc = -1;
            break;
        }
        const struct frow *f = &s->frows[fi];
        const struct addr *a = &s->addrs[f->addr];
        /* an inlined level (depth > 0) continues its parent's address */
        int64_t hang = pi == NONE ? 0
                     : f->depth > 0 && s->frows[pfi].addr == f->addr ? t->group_parent[pi]
                     : t->group_end[pi];
        t->group_parent[j] = hang;
        int64_t node = hang;
        if (a->nnew)
            for (int d = 0; d < a->nnew; d++) node = new_node(t, node, a->ids[d]);
        else
            for (size_t d = 0; d < a->nold; d++) node = new_node(t, node, s->frows[a->first + d].id);
        t->group_end[j] = node;
    }
    free(todo);
    return rc;
}

static int rebuild_stacks(struct sym *s, size_t *nodes)
{
    struct tree t = { 0 };
    sqlite3_stmt *st;
    const char *sql = "SELECT id, parent, frame FROM stack";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(s, sql);
    size_t cap = 4096;
    t.old = xmalloc(cap * sizeof *t.old);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (t.nold == cap) t.old = xrealloc(t.old, (cap *= 2) * sizeof *t.old);
        t.old[t.nold++] = (struct node){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                         sqlite3_column_int64(st, 2) };
        if (t.old[t.nold - 1].id > t.base) t.base = t.old[t.nold - 1].id;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sql_fail(s, sql);
    if (t.base + (int64_t)t.nold * RES_MAX_INLINE >= INT32_MAX || s->max_frame >= INT32_MAX)
        return error(EXIT_FAILED, "%s: ids beyond 2^31: cannot rebuild its stacks", s->path);
    idmap_init(&t.old_ix, t.nold);
    idmap_init(&t.new_ix, t.nold);
    int created;
    for (size_t i = 0; i < t.nold; i++) *idmap_put(&t.old_ix, (uint64_t)t.old[i].id, &created) = (uint32_t)i;
    t.group_end = xcalloc(t.nold + 1, sizeof *t.group_end);
    t.group_parent = xcalloc(t.nold + 1, sizeof *t.group_parent);
    rc = 0;
    for (size_t i = 0; i < t.nold && !rc; i++)
        if (resolve_node(s, &t, (uint32_t)i))
            rc = error(EXIT_BAD_INPUT, "%s: the stack table is not a tree (stack %lld); nothing written",
                       s->path, (long long)t.old[i].id);
    sqlite3_stmt *map = NULL, *ins = NULL;
    if (!rc) rc = exec(s, "CREATE TEMP TABLE stack_map(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)");
    if (!rc && (sqlite3_prepare_v2(s->db, "INSERT INTO stack_map VALUES(?, ?)", -1, &map, NULL) ||
                sqlite3_prepare_v2(s->db, "INSERT INTO stack(id, parent, frame) VALUES(?, ?, ?)", -1, &ins, NULL)))
        rc = sql_fail(s, "preparing stack statements");
    for (size_t i = 0; i < t.nold && !rc; i++) {
        sqlite3_reset(map);
        sqlite3_bind_int64(map, 1, t.old[i].id);
        sqlite3_bind_int64(map, 2, t.group_end[i]);
        if (sqlite3_step(map) != SQLITE_DONE) rc = sql_fail(s, "stack_map");
    }
    if (!rc) rc = exec(s, "DELETE FROM stack");
    for (size_t i = 0; i < t.nnew && !rc; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, t.new[i].id);
        sqlite3_bind_int64(ins, 2, t.new[i].parent);
        sqlite3_bind_int64(ins, 3, t.new[i].frame);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = sql_fail(s, "writing stacks");
    }
    sqlite3_finalize(map);
    sqlite3_finalize(ins);
    if (!rc) rc = exec(s, "UPDATE sample SET stack = (SELECT new FROM stack_map WHERE old = sample.stack)");
    if (!rc) rc = exec(s, "DELETE FROM frame WHERE id NOT IN (SELECT frame FROM stack)");
    if (!rc) rc = exec(s, "DROP TABLE stack_map");
    *nodes = t.nnew;
    free(t.old);
    free(t.new);
    free(t.group_end);
    free(t.group_parent);
    idmap_free(&t.old_ix);
    idmap_free(&t.new_ix);
    return rc;
}

/* ---------------------------------------------------------------- command */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int symbolize(struct sym *s, int skip_mismatched, int dry_run)
{
    double t0 = now();
    int rc = exec(s, "BEGIN IMMEDIATE");
    if (rc) return rc;
    s->max_function = max_id(s, "function");
    s->max_file = max_id(s, "file");
    s->max_frame = max_id(s, "frame");
    if (s->max_function < 0 || s->max_file < 0 || s->max_frame < 0) rc = sql_fail(s, "reading ids");
    strtab_init(&s->names);
    idmap_init(&s->fn_id, 1024);
    idmap_init(&s->file_id, 1024);
    if (!rc) rc = load_names(s, "SELECT id, name FROM function", &s->fn_id);
    if (!rc) rc = load_names(s, "SELECT id, path FROM file", &s->file_id);
    if (!rc) rc = load_frames(s);

    size_t nmodules = 0, nodes = 0;
    sqlite3_stmt *st = NULL;
    const char *sql = "SELECT id, path, build_id FROM module WHERE path NOT LIKE '[%' ORDER BY id";
    if (!rc && sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) rc = sql_fail(s, sql);
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = symbolize_module(s, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                              (const char *)sqlite3_column_text(st, 2), skip_mismatched, &nmodules);
    if (!rc && step != SQLITE_DONE) rc = sql_fail(s, sql);
    sqlite3_finalize(st);

    int reshaped = 0;
    for (size_t i = 0; i < s->naddrs; i++)
        if (s->addrs[i].nnew && s->addrs[i].nnew != (int)s->addrs[i].nold) reshaped = 1;
    if (!rc && reshaped) rc = rebuild_stacks(s, &nodes);
    if (!rc) rc = exec(s, dry_run ? "ROLLBACK" : "COMMIT");
    if (rc) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    double secs = now() - t0;
    printf("%s: %zu addresses of %zu modules resolved in %.3f s (%.0f addresses/s)%s\n", s->path,
           s->resolved, nmodules, secs, secs > 0 ? (double)s->resolved / secs : 0.0,
           dry_run ? "; dry run, nothing written" : "");
    printf("%zu addresses changed: %zu frames gained a function name, %zu a line, %zu inline frames added",
           s->changed, s->gained_names, s->gained_lines, s->new_frames);
    if (s->kept) printf("; %zu kept as they were (they had more names than found now)", s->kept);
    if (reshaped) printf("; stack tree rebuilt (%zu nodes)", nodes);
    printf("\n");
    return 0;
}

int cmd_symbolize(int argc, char **argv)
{
    struct common c;
    common_init(&c, "symbolize");
    int opt, skip_mismatched = 0, dry_run = 0;
    static char default_path[] = ":.debug:/usr/lib/debug";
    resolve_debuginfo_path = default_path;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
        switch (opt) {
        case OPT_HELP: fputs(help, stdout); return 0;
        case OPT_DEBUGINFO: resolve_debuginfo_path = optarg; break;
        case OPT_SKIP_MISMATCHED: skip_mismatched = 1; break;
        case OPT_DRY_RUN: dry_run = 1; break;
        default: return bad_option(c.cmd, opt, argv);
        }
    }
    if (optind + 1 != argc) return usage_error(c.cmd, optind >= argc ? "needs DB" : "too many arguments");
    struct sym s = { .path = argv[optind] };
    char err[512];
    int rc = profile_open_db(s.path, &s.db, 1, err, sizeof err);
    if (rc) return error(rc, "%s: %s", s.path, err);
    rc = symbolize(&s, skip_mismatched, dry_run);
    sqlite3_close(s.db);
    for (size_t i = 0; i < s.naddrs; i++) free(s.addrs[i].ids);
    free(s.addrs);
    free(s.frows);
    idmap_free(&s.frame_ix);
    idmap_free(&s.fn_id);
    idmap_free(&s.file_id);
    strtab_free(&s.names);
    return rc;
}
