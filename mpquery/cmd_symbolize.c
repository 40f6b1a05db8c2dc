/* mpquery symbolize DB: resolves the profile's frames again from the
 * modules on disk (recorded path and build-id, offset), e.g. after debug
 * info was installed, with the recorder's own resolution (prof/common/resolve.c).
 * The one command that writes to its database: one transaction, all or
 * nothing.
 *
 * An address whose inline chain changes length changes the stacks through
 * it (a stack holds one frame per inline level), so then the stack tree is
 * rebuilt: each old node maps to the path of re-resolved addresses leading
 * to it, new nodes get ids above the old ones (sample rows are moved with
 * one UPDATE, which never collides with an old id), and frames no longer
 * used are deleted. Otherwise frames are updated in place and ids stay.
 *
 * With --debuginfod, a module without DWARF here gets its debug file from
 * debuginfod servers by build-id (debuginfod.c), and a new libdwfl session
 * finds it through find_debuginfo; a module whose file could not be
 * fetched is left as it is (no frame of it written). */
#include "mpquery.h"
#include "profile.h"
#include "resolve.h"
#include "commands.h"
#include "debuginfod.h"
#include "debugcache.h"
#include "opt_groups.h"
#include "options.h"
#include "safeopen.h"
#include "symdb.h"
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
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
"--debuginfod fetches the debug files of the modules that have no DWARF\n"
"here from debuginfod servers by build-id, into the cache directory, with\n"
"libdebuginfod (package libdebuginfod1). A module that could not be fetched\n"
"keeps its names, one line on stderr; the others are named again. Exit 1\n"
"when a server could not be reached or failed (a 404 is not a failure);\n"
"$DEBUGINFOD_TIMEOUT (seconds, default 90) bounds a fetch: a server that\n"
"has not sent 100 KiB within that time is given up.\n"
"Without --debuginfod nothing is asked of any server, whatever\n"
"$DEBUGINFOD_URLS says.\n"
"\n";

static const char more[] =
"\n"
"example:\n"
"  apt-get install python3.11-dbgsym && mpquery symbolize py.db\n"
"  mpquery symbolize clang.db --debuginfod https://debuginfod.debian.net\n";



struct name_ids { struct sym *s; struct idmap *ids; };

static void add_name(void *ctx, int64_t id, const char *name)
{
    struct name_ids *x = ctx;
    uint32_t ix = strtab_intern(&x->s->names, name, strlen(name));
    int created;
    uint32_t *v = idmap_put(x->ids, ix, &created);
    if (created) *v = (uint32_t)id;
}

/* The names with their ids, the largest ids, and the frames grouped by
 * address. */
static int load(struct sym *s)
{
    s->max_function = symdb_max_id(&s->db, "function");
    s->max_file = symdb_max_id(&s->db, "file");
    s->max_frame = symdb_max_id(&s->db, "frame");
    if (s->max_function < 0 || s->max_file < 0 || s->max_frame < 0) return db_fail(s, EXIT_FAILED);
    strtab_init(&s->names);
    idmap_init(&s->fn_id, 1024);
    idmap_init(&s->file_id, 1024);
    struct name_ids fns = { s, &s->fn_id }, files = { s, &s->file_id };
    int rc;
    if ((rc = symdb_each_name(&s->db, 0, add_name, &fns)) || (rc = symdb_each_name(&s->db, 1, add_name, &files))
        || (rc = symdb_frames(&s->db, &s->frows, &s->nframes)))
        return db_fail(s, rc);
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
    return db_fail(s, symdb_insert_name(&s->db, is_file, id, name));
}

/* Never lose what was known (debug info found when recording and not now):
 * a chain that names fewer functions and lines is not taken. */
static int knows_less(const struct sym *s, const struct addr *a, const struct sym_frame *chain, int n)
{
    int known_old = 0, known_new = 0;
    for (size_t d = 0; d < a->nold; d++)
        known_old += (s->frows[a->first + d].function != 0) + (s->frows[a->first + d].line != 0);
    for (int d = 0; d < n; d++) known_new += (chain[d].function != NULL) + (chain[d].line != 0);
    return known_new < known_old;
}

/* Writes the resolved chain of address a: existing rows updated where they
 * differ, missing depths inserted. */
static int store_chain(struct sym *s, struct addr *a, const struct sym_frame *chain, int n)
{
    const struct frow *first = &s->frows[a->first];
    if (knows_less(s, a, chain, n)) {
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
        a->ids[d] = old ? old->id : ++s->max_frame;
        const struct frow row = { .id = a->ids[d], .module = first->module, .offset = first->offset,
                                  .function = fn, .file = file, .depth = d, .line = chain[d].line };
        if (symdb_write_frame(&s->db, &row, !old)) return db_fail(s, EXIT_FAILED);
    }
    if (changed) s->changed++;
    return 0;
}

/* The debug file fetched for the module being resolved (--debuginfod), or
 * NULL. */
static const char *fetched_debuginfo;

/* The fetched file, which exists only for a module without DWARF here
 * (so it comes first: a local file without DWARF would hide it), else
 * debug info from this machine's disk, as in the recorder. (libdwfl's own
 * debuginfod lookup, in dwfl_standard_find_debuginfo, is not used: it
 * would ask whenever DEBUGINFOD_URLS is set.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    if (fetched_debuginfo) {
        int fd = mp_open_regular(AT_FDCWD, fetched_debuginfo, 0, NULL);
        if (fd >= 0 && (*debuginfo_file_name = strdup(fetched_debuginfo))) return fd;
        if (fd >= 0) close(fd);
    }
    return resolve_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                  debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &resolve_debuginfo_path,
};

/* A libdwfl session with the module at path alone; NULL with *m NULL when
 * the file cannot be read (its errno or libdwfl's message in why). */
static Dwfl *open_module(const char *path, Dwfl_Module **m, const char **why)
{
    Dwfl *d = dwfl_begin(&offline_callbacks);
    *m = NULL;
    if (!d) {
        *why = dwfl_errmsg(-1);
        return NULL;
    }
    /* a profile's path, maybe a FIFO or a device: opened here, not by
     * libdwfl (which would wait on a FIFO for ever) */
    struct stat st;
    int fd = mp_open_regular(AT_FDCWD, path, 0, &st);
    if (fd < 0) {
        *why = fd == -1 ? strerror(errno) : mp_file_kind(&st);
        return d;
    }
    *m = dwfl_report_elf(d, path, path, fd, 0, 0);     /* fd is libdwfl's when it succeeds */
    dwfl_report_end(d, NULL, NULL);
    if (!*m) {
        *why = dwfl_errmsg(-1);
        close(fd);
    }
    return d;
}

/* --debuginfod: the module's debug file from the servers when it has no
 * DWARF here; *session is then a new one that finds it. Returns 0 (also
 * when nothing was needed: *fetched NULL), or 1 when the file could not be
 * fetched (said: the module is left as it is). */
static int fetch_module(struct sym *s, Dwfl **session, Dwfl_Module **m, const char *path, const char *build_id,
                        char **fetched)
{
    GElf_Addr bias;
    *fetched = NULL;
    if (!s->dbgd || dwfl_module_getdwarf(*m, &bias)) return 0;
    char why[1024];
    enum dbgd_result r = dbgd_fetch(s->dbgd, build_id, path, fetched, why, sizeof why);
    if (r != DBGD_FETCHED) {
        warning("symbolize: debuginfod: %s (build-id %s): %s; its frames keep their names", path,
                *build_id ? build_id : "(none)", why);
        s->not_fetched++;
        s->fetch_failed |= r == DBGD_FAILED;
        return 1;
    }
    s->fetched++;
    /* libdwfl looked for the debug file once in this session: a new one */
    dwfl_end(*session);
    fetched_debuginfo = *fetched;
    const char *err = NULL;
    *session = open_module(path, m, &err);
    if (!*m) {
        warning("symbolize: %s: %s; its frames keep their names", path, err);
        return 1;
    }
    return 0;
}

/* Resolves every address of one module. Returns 0, or EXIT_BAD_INPUT for a
 * build-id mismatch (unless skipped), EXIT_FAILED for a database error;
 * reported. */
static int symbolize_module(struct sym *s, int64_t module, const char *path, const char *build_id)
{
    Dwfl_Module *m;
    const char *why = NULL;
    char *fetched = NULL;
    Dwfl *d = open_module(path, &m, &why);
    if (!d) return error(EXIT_FAILED, "libdwfl: %s", why);
    int rc = 0;
    if (!m) {
        warning("symbolize: %s: %s; its frames keep their names", path, why);
        goto out;
    }
    const char *disk_path, *disk_id;
    GElf_Addr bias;
    resolve_module(m, &disk_path, &disk_id, &bias);
    if (strcmp(disk_id, build_id) != 0) {
        if (s->skip_mismatched) {
            warning("symbolize: %s: build-id %s on disk, %s recorded; skipped", path,
                    *disk_id ? disk_id : "(none)", *build_id ? build_id : "(none)");
        } else {
            rc = error(EXIT_BAD_INPUT, "symbolize: %s: build-id %s on disk, %s recorded: not the file "
                       "that was profiled; nothing written (--skip-mismatched resolves the others)",
                       path, *disk_id ? disk_id : "(none)", *build_id ? build_id : "(none)");
        }
        goto out;
    }
    if (fetch_module(s, &d, &m, path, build_id, &fetched)) goto out;
    s->modules++;
    for (size_t i = 0; i < s->naddrs && !rc; i++) {
        struct addr *a = &s->addrs[i];
        const struct frow *f = &s->frows[a->first];
        if (f->module != module) continue;
        struct sym_frame chain[RES_MAX_INLINE];
        int n = resolve_chain(m, (Dwarf_Addr)f->offset + bias, chain);
        s->resolved++;
        rc = store_chain(s, a, chain, n);
    }
out:
    dwfl_end(d);
    fetched_debuginfo = NULL;
    free(fetched);
    return rc;
}

/* ---------------------------------------------------------------- command */

static void report(const struct sym *s, double secs, int dry_run, int reshaped, size_t nodes)
{
    printf("%s: %zu addresses of %zu modules resolved in %.3f s (%.0f addresses/s)%s\n", s->path,
           s->resolved, s->modules, secs, secs > 0 ? (double)s->resolved / secs : 0.0,
           dry_run ? "; dry run, nothing written" : "");
    printf("%zu addresses changed: %zu frames gained a function name, %zu a line, %zu inline frames added",
           s->changed, s->gained_names, s->gained_lines, s->new_frames);
    if (s->kept) printf("; %zu kept as they were (they had more names than found now)", s->kept);
    if (reshaped) printf("; stack tree rebuilt (%zu nodes)", nodes);
    printf("\n");
    if (s->dbgd)
        printf("debuginfod: %zu debug file%s from %s (or the cache), %zu module%s without (said above)\n",
               s->fetched, s->fetched == 1 ? "" : "s", s->dbgd->urls, s->not_fetched,
               s->not_fetched == 1 ? "" : "s");
}

/* One transaction: everything read, every module resolved and its frames
 * written, the stacks rebuilt when a chain changed length; then COMMIT, or
 * ROLLBACK for a dry run or on any error. */
static int symbolize(struct sym *s, int dry_run)
{
    double t0 = monotonic_seconds();
    int rc = db_fail(s, symdb_exec(&s->db, "BEGIN IMMEDIATE"));
    if (rc) return rc;
    rc = load(s);
    struct module_row *mods = NULL;
    size_t nmods = 0;
    struct arena text = { 0 };
    if (!rc) rc = db_fail(s, symdb_modules(&s->db, &mods, &nmods, &text));
    for (size_t i = 0; i < nmods && !rc; i++)
        rc = symbolize_module(s, mods[i].id, mods[i].path, mods[i].build_id);
    free(mods);
    arena_free(&text);
    symdb_finish(&s->db);
    size_t nodes = 0;
    int reshaped = 0;
    for (size_t i = 0; i < s->naddrs; i++)
        if (s->addrs[i].nnew && s->addrs[i].nnew != (int)s->addrs[i].nold) reshaped = 1;
    if (!rc && reshaped) rc = symbolize_rebuild_stacks(s, &nodes);
    if (!rc) rc = db_fail(s, symdb_exec(&s->db, dry_run ? "ROLLBACK" : "COMMIT"));
    if (rc) {
        symdb_exec(&s->db, "ROLLBACK");
        return rc;
    }
    if (!mpquery_quiet) report(s, monotonic_seconds() - t0, dry_run, reshaped, nodes);
    return s->fetch_failed ? EXIT_FAILED : 0;
}

/* "--debuginfod URL" as "--debuginfod=URL": the option's value is
 * optional (DEBUGINFOD_URLS), and the word after it is taken as its value
 * when it is a URL (has "://"), not DB. Returns the new argc. */
static int join_debuginfod_url(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (strcmp(argv[i], "--debuginfod") || !strstr(argv[i + 1], "://")) continue;
        struct strbuf sb = { 0 };
        sb_printf(&sb, "--debuginfod=%s", argv[i + 1]);
        argv[i] = sb.s;         /* for the life of the process */
        memmove(argv + i + 1, argv + i + 2, (size_t)(argc - i - 2) * sizeof *argv);
        argv[argc - 1] = NULL;
        return argc - 1;
    }
    return argc;
}

/* Everything symbolize kept, the database closed. */
static void sym_free(struct sym *s)
{
    symdb_close(&s->db);
    for (size_t i = 0; i < s->naddrs; i++) free(s->addrs[i].ids);
    free(s->addrs);
    free(s->frows);
    idmap_free(&s->frame_ix);
    idmap_free(&s->fn_id);
    idmap_free(&s->file_id);
    strtab_free(&s->names);
}

int cmd_symbolize(int argc, char **argv)
{
    struct common c;
    struct sym s = { 0 };
    int dry_run = 0;
    char *debuginfod = NULL, *debuginfod_cache = NULL;
    static char default_path[] = ":.debug:/usr/lib/debug";
    resolve_debuginfo_path = default_path;
    const char *bad_cache = debugcache_setup(1);
    if (bad_cache) return error(EXIT_BAD_INPUT, "symbolize: %s", bad_cache);
    const struct opt opts[] = {
        { .name = "debuginfo-path", .arg = "P", .str = &resolve_debuginfo_path,
          .help = "where separate debug info is looked for (elfutils'\n"
                  "format; default \":.debug:/usr/lib/debug\")" },
        { .name = "skip-mismatched", .flag = &s.skip_mismatched, .value = 1,
          .help = "leave modules with another build-id as they are and\n"
                  "resolve the others" },
        { .name = "debuginfod", .arg = "URL", .optional = 1, .str = &debuginfod,
          .help = "fetch the debug files missing here from debuginfod\n"
                  "servers (DEBUGINFOD_URLS's format, default its value;\n"
                  "\"--debuginfod URL\" too when URL has \"://\")" },
        { .name = "debuginfod-cache", .arg = "DIR", .str = &debuginfod_cache,
          .help = "where fetched files are kept (default: libdebuginfod's,\n"
                  "DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client)" },
        { .name = "dry-run", .flag = &dry_run, .value = 1, .help = "resolve and report, write nothing" },
        OPTION_QUIET("no report of what was resolved"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "symbolize", .usage = usage, .more = more, .opts = opts,
                                .operands = 1, .missing = "needs DB" };
    argc = join_debuginfod_url(argc, argv);
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    s.path = argv[optind];
    char err[1024];
    struct dbgd dbgd = { .log_fd = -1 };
    if (debuginfod_cache && !debuginfod)
        return error(EXIT_BAD_INPUT, "symbolize: --debuginfod-cache is for --debuginfod");
    if (debuginfod) {
        if ((rc = dbgd_open(&dbgd, debuginfod, debuginfod_cache, err, sizeof err))) {
            dbgd_close(&dbgd);
            return error(rc, "symbolize: %s", err);
        }
        s.dbgd = &dbgd;
    }
    rc = profile_open_db(s.path, &s.db.db, 1, err, sizeof err);
    if (rc) {
        dbgd_close(&dbgd);
        return error(rc, "%s: %s", s.path, err);
    }
    rc = symbolize(&s, dry_run);
    if (*debugcache_refused) warning("symbolize: debug-info cache not used: %s", debugcache_refused);
    sym_free(&s);
    dbgd_close(&dbgd);
    return rc;
}
