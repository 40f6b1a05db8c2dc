/* mpquery export --format pprof: the selection as pprof's profile.proto
 * (github.com/google/pprof/proto/profile.proto), gzip-compressed, with the
 * sample types of Go's heap profiles: alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count, inuse_space/bytes (ncalls,
 * memtot, nlive, memlive), inuse_space the default; then, when the
 * profile has them, mmap_count/count, mapped_space/bytes and
 * mapped_resident/bytes (nmap, mapped, rss: the program's own mappings)
 * and cold_space/bytes (memcold; coldage, an age, adds up to nothing and
 * is not a sample type). One sample per site
 * (export.h: a stack after rules), its location ids leaf first; a location
 * is an address with its lines, innermost first (inlined frames are lines
 * of their caller's location), each line a function (name after rules,
 * the recorded name as system_name, its file) and a line number; mappings
 * are the modules with their build ids. The encoding is written here:
 * varints, length-delimited fields, packed repeated fields, and top-level
 * fields streamed into zlib as they are made (a message's fields may come
 * in any order: the string table is last, once every string is known).
 *
 * Addresses: the recorder keeps module offsets, not load addresses, so
 * module k is laid out at (k + 1) << 40 (mappings never overlap), each
 * location at its module's start plus its offset, file_offset 0; every
 * mapping says it has functions, file names, line numbers and inlined
 * frames, so pprof never symbolizes them again. A frame whose offset is
 * no address (a tag's, a mapping's, a Python frame's: names.c) has a
 * location without mapping or address, its lines only. */
#include "export.h"
#include "listing.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---------------------------------------------------------------- encoding */
enum { WIRE_VARINT = 0, WIRE_BYTES = 2 };

struct pb { unsigned char *b; size_t len, cap; };

static void pb_reserve(struct pb *m, size_t n)
{
    if (m->len + n <= m->cap) return;
    size_t cap = m->cap ? m->cap : 256;
    while (cap < m->len + n) cap *= 2;
    m->b = xrealloc(m->b, cap);
    m->cap = cap;
}

static void pb_varint(struct pb *m, uint64_t v)
{
    pb_reserve(m, 10);
    while (v >= 0x80) {
        m->b[m->len++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    m->b[m->len++] = (unsigned char)v;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

static void pb_key(struct pb *m, int field, int wire) { pb_varint(m, (uint64_t)field << 3 | (unsigned)wire); }

/* An integer field (uint64 or int64: negative values as their two's
 * complement); 0 is the default and not written. */
static void pb_int(struct pb *m, int field, uint64_t v)
{
    if (!v) return;
    pb_key(m, field, WIRE_VARINT);
    pb_varint(m, v);
}

static void pb_bytes(struct pb *m, int field, const void *p, size_t n)
{
    pb_key(m, field, WIRE_BYTES);
    pb_varint(m, n);
    pb_reserve(m, n);
    memcpy(m->b + m->len, p, n);
    m->len += n;
}

static void pb_message(struct pb *m, int field, const struct pb *sub) { pb_bytes(m, field, sub->b, sub->len); }

static void pb_packed(struct pb *m, int field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += varint_len(v[i]);
    pb_key(m, field, WIRE_BYTES);
    pb_varint(m, len);
    for (size_t i = 0; i < n; i++) pb_varint(m, v[i]);
}

/* ---------------------------------------------------------------- gzip */
/* The profile's top-level fields gather in `top` and go through deflate
 * in blocks of about 1 MiB. */
struct gz {
    z_stream z;
    FILE *f;
    struct pb top;
    unsigned char out[1 << 16];
};

static void gz_deflate(struct gz *g, int flush)
{
    g->z.next_in = g->top.b;
    g->z.avail_in = (uInt)g->top.len;
    int rc;
    do {
        g->z.next_out = g->out;
        g->z.avail_out = sizeof g->out;
        rc = deflate(&g->z, flush);
        size_t have = sizeof g->out - g->z.avail_out;
        if (have) fwrite(g->out, 1, have, g->f);    /* errors: the caller's ferror */
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && rc == Z_OK));
    g->top.len = 0;
}

/* A field holding msg. */
static void gz_field(struct gz *g, int field, const struct pb *msg)
{
    pb_message(&g->top, field, msg);
    if (g->top.len >= (1 << 20)) gz_deflate(g, Z_NO_FLUSH);
}

/* Fields already keyed (msg's bytes as they are). */
static void gz_fields(struct gz *g, const struct pb *msg)
{
    pb_reserve(&g->top, msg->len);
    memcpy(g->top.b + g->top.len, msg->b, msg->len);
    g->top.len += msg->len;
    if (g->top.len >= (1 << 20)) gz_deflate(g, Z_NO_FLUSH);
}

/* ---------------------------------------------------------------- the profile */
struct pprof {
    const struct profile *p;
    int counter[8]; size_t ncounters;  /* the sample types' counters, in order */
    const struct sites *s;
    const struct dtree *t;
    struct gz *g;
    struct strtab strings;          /* string_table: id = index, "" first */
    struct idmap functions;         /* (label, file + 1) -> function id - 1 */
    size_t nfunctions;
    uint32_t *mapping;              /* per module: mapping id, 0: none */
    uint64_t *module_limit;         /* per module: largest offset used + 1 */
    struct pb msg, sub;
};

static uint64_t str(struct pprof *x, const char *s) { return strtab_intern(&x->strings, s, strlen(s)); }

static uint64_t label_str(struct pprof *x, uint32_t label)
{
    return strtab_intern(&x->strings, x->t->labels.str[label], x->t->labels.len[label]);
}

static void value_type(struct pprof *x, int field, const char *type, const char *unit)
{
    x->sub.len = 0;
    pb_int(&x->sub, 1, str(x, type));
    pb_int(&x->sub, 2, str(x, unit));
    gz_field(x->g, field, &x->sub);
}

/* The sample types: Go's heap profile's, then those the profile has. */
static void sample_types(struct pprof *x)
{
    static const struct { int counter; const char *type, *unit; counter_set when; } types[] = {
        { NCALLS, "alloc_objects", "count", 0 }, { MEMTOT, "alloc_space", "bytes", 0 },
        { NLIVE, "inuse_objects", "count", 0 }, { MEMLIVE, "inuse_space", "bytes", 0 },
        { NMAP, "mmap_count", "count", MAPPING_COUNTERS }, { MAPPED, "mapped_space", "bytes", MAPPING_COUNTERS },
        { RSS, "mapped_resident", "bytes", MAPPING_COUNTERS }, { MEMCOLD, "cold_space", "bytes", COLD_COUNTERS },
    };
    _Static_assert(sizeof types / sizeof *types <= sizeof x->counter / sizeof *x->counter, "room for every type");
    counter_set shown = shown_counters(x->p);
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        if (types[i].when && !(shown & types[i].when)) continue;
        value_type(x, 1, types[i].type, types[i].unit);
        x->counter[x->ncounters++] = types[i].counter;
    }
}

/* The sample values of a site, in the order of the sample types; 0 when
 * they are all 0. */
static int sample_values(const struct pprof *x, const counters *c, uint64_t *v)
{
    uint64_t any = 0;
    for (size_t i = 0; i < x->ncounters; i++) any |= v[i] = (uint64_t)c->v[x->counter[i]];
    return any != 0;
}

/* One sample per site with a value; marks the locations they use. */
static void write_samples(struct pprof *x, const counters *site_c, uint8_t *used)
{
    const struct sites *s = x->s;
    uint64_t *ids = NULL, v[sizeof x->counter / sizeof *x->counter];
    size_t cap = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (!sample_values(x, &site_c[i], v)) continue;
        size_t n = 0;
        for (uint32_t k = (uint32_t)i; k != 0; k = s->parent[k]) {
            if (n == cap) ids = xrealloc(ids, (cap = cap ? 2 * cap : 64) * sizeof *ids);
            ids[n++] = s->loc[k] + 1;
            used[s->loc[k]] = 1;
        }
        x->msg.len = 0;
        pb_packed(&x->msg, 1, ids, n);
        pb_packed(&x->msg, 2, v, x->ncounters);
        gz_field(x->g, 2, &x->msg);
    }
    free(ids);
}

/* The function id of a location's line: one per (name after rules, file). */
static uint64_t function_id(struct pprof *x, uint32_t frame, uint32_t label)
{
    const struct profile *p = x->p;
    const struct frame *f = frame == NONE ? NULL : &p->frames[frame];
    uint32_t file = f ? f->file : NONE;
    int created;
    uint32_t *v = idmap_put(&x->functions, (uint64_t)label << 32 | (uint32_t)(file + 1), &created);
    if (!created) return *v + 1;
    *v = (uint32_t)x->nfunctions++;
    x->sub.len = 0;
    pb_int(&x->sub, 1, *v + 1);
    pb_int(&x->sub, 2, label_str(x, label));
    pb_int(&x->sub, 3, f && f->function != NONE ? str(x, p->functions[f->function]) : label_str(x, label));
    if (file != NONE) pb_int(&x->sub, 4, str(x, p->files[file]));
    gz_field(x->g, 5, &x->sub);
    return *v + 1;
}

static uint64_t module_start(uint32_t mapping) { return (uint64_t)mapping << 40; }

/* A used location: its mapping, address and lines, innermost first. */
static void write_location(struct pprof *x, uint32_t loc)
{
    const struct profile *p = x->p;
    const struct sites *s = x->s;
    uint32_t outer = loc;
    while (s->loc_parent[outer] != NONE) outer = s->loc_parent[outer];
    struct pb line = { 0 };
    x->msg.len = 0;
    pb_int(&x->msg, 1, loc + 1);
    if (s->loc_frame[outer] != NONE && frame_has_address(p, &p->frames[s->loc_frame[outer]])) {
        const struct frame *f = &p->frames[s->loc_frame[outer]];
        uint32_t m = x->mapping[f->module];
        pb_int(&x->msg, 2, m);
        pb_int(&x->msg, 3, (m ? module_start(m) : 0) + (uint64_t)f->offset);
    }
    for (uint32_t k = loc; k != NONE; k = s->loc_parent[k]) {
        uint32_t frame = s->loc_frame[k];
        line.len = 0;
        pb_int(&line, 1, function_id(x, frame, s->loc_label[k]));
        if (frame != NONE) pb_int(&line, 2, (uint64_t)(int64_t)p->frames[frame].line);
        pb_message(&x->msg, 4, &line);
    }
    gz_field(x->g, 4, &x->msg);
    free(line.b);
}

/* The modules the used locations are in, the executable's first (pprof
 * takes mapping[0] for the main binary). */
static void number_mappings(struct pprof *x, const struct query *q, const uint8_t *used)
{
    const struct profile *p = x->p;
    const struct sites *s = x->s;
    x->mapping = xcalloc(p->nmodules, sizeof *x->mapping);
    x->module_limit = xcalloc(p->nmodules, sizeof *x->module_limit);
    uint8_t *needed = xcalloc(p->nmodules, 1);
    for (size_t l = 0; l < s->nlocs; l++) {
        if (!used[l] || s->loc_frame[l] == NONE) continue;
        const struct frame *f = &p->frames[s->loc_frame[l]];
        if (p->modules[f->module].special || !frame_has_address(p, f)) continue;
        needed[f->module] = 1;
        if ((uint64_t)f->offset + 1 > x->module_limit[f->module]) x->module_limit[f->module] = (uint64_t)f->offset + 1;
    }
    const char *exe = NULL;
    for (size_t i = 0; i < p->nprocs && !exe; i++)
        if (q->sel.proc_snapshot[i] != NONE) exe = p->procs[i].exe;
    uint32_t next = 1;
    for (size_t m = 0; exe && m < p->nmodules; m++)
        if (needed[m] && !strcmp(p->modules[m].path, exe)) { x->mapping[m] = next++; break; }
    for (size_t m = 0; m < p->nmodules; m++)
        if (needed[m] && !x->mapping[m]) x->mapping[m] = next++;
    free(needed);
}

/* In the order of their ids: the first is the main binary. */
static void write_mappings(struct pprof *x)
{
    const struct profile *p = x->p;
    uint32_t *module_of = xmalloc((p->nmodules + 1) * sizeof *module_of);
    uint32_t n = 0;
    for (size_t m = 0; m < p->nmodules; m++)
        if (x->mapping[m]) module_of[x->mapping[m]] = (uint32_t)m, n++;
    for (uint32_t id = 1; id <= n; id++) {
        uint32_t m = module_of[id];
        x->msg.len = 0;
        pb_int(&x->msg, 1, id);
        pb_int(&x->msg, 2, module_start(id));
        pb_int(&x->msg, 3, module_start(id) + x->module_limit[m]);
        pb_int(&x->msg, 5, str(x, p->modules[m].path));
        pb_int(&x->msg, 6, str(x, p->modules[m].build_id));
        for (int field = 7; field <= 10; field++) pb_int(&x->msg, field, 1);
        gz_field(x->g, 3, &x->msg);
    }
    free(module_of);
}

/* time_nanos, duration_nanos: from the first selected process's start
 * (a window: its snapshot at --since, when it has one) to the last
 * selected snapshot (a window: at --until). */
static void write_times(struct pprof *x, const struct query *q)
{
    const struct profile *p = x->p;
    double start = 0, end = 0;
    int any = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        uint32_t sn = q->sel.proc_snapshot[i], since = q->sel.proc_since ? q->sel.proc_since[i] : NONE;
        if (sn == NONE) continue;
        double from = since != NONE ? p->snapshots[since].time : p->procs[i].start_time;
        if (!any || from < start) start = from;
        if (!any || p->snapshots[sn].time > end) end = p->snapshots[sn].time;
        any = 1;
    }
    if (!any || !(start > 0 && start < 9e9)) return;       /* nanoseconds fit in int64 until 2255 */
    x->msg.len = 0;
    pb_int(&x->msg, 9, (uint64_t)(int64_t)(start * 1e9));
    if (end > start && end - start < 9e9) pb_int(&x->msg, 10, (uint64_t)(int64_t)((end - start) * 1e9));
    gz_fields(x->g, &x->msg);
}

/* The fields after the samples: scalars, comment, the string table. */
static void write_tail(struct pprof *x, const struct query *q, const struct export_opts *o)
{
    struct strbuf comment = { 0 };
    value_type(x, 11, "space", "bytes");
    x->msg.len = 0;
    pb_int(&x->msg, 12, 1);
    sb_printf(&comment, "mallocprof profile %s: ", o->db);
    export_process_names(q, &comment);
    uint64_t comments[2] = { str(x, comment.s),
                             str(x, "alloc_objects, alloc_space: ncalls, memtot; inuse_objects, inuse_space: "
                                    "nlive, memlive (every allocation recorded: period 1)") };
    for (int i = 0; i < 2; i++) pb_int(&x->msg, 13, comments[i]);
    pb_int(&x->msg, 14, str(x, "inuse_space"));
    gz_fields(x->g, &x->msg);
    write_times(x, q);
    for (size_t i = 0; i < x->strings.n; i++) {
        x->msg.len = 0;
        pb_bytes(&x->msg, 6, x->strings.str[i], x->strings.len[i]);
        gz_fields(x->g, &x->msg);
    }
    sb_free(&comment);
}

int export_pprof(struct listing *l, const struct export_opts *o, FILE *f)
{
    const struct query *q = &l->q[0];
    struct sites s;
    sites_build(&s, q, &l->t);
    counters *site_c = sites_counters(&s, q, &l->t);
    struct gz g = { .f = f };
    if (deflateInit2(&g.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return error(EXIT_FAILED, "zlib: cannot start compressing");
    struct pprof x = { .p = q->p, .s = &s, .t = &l->t, .g = &g };
    strtab_init(&x.strings);
    str(&x, "");
    idmap_init(&x.functions, 1024);
    uint8_t *used = xcalloc(s.nlocs, 1);

    sample_types(&x);
    write_samples(&x, site_c, used);
    number_mappings(&x, q, used);
    write_mappings(&x);
    for (uint32_t loc = 0; loc < s.nlocs; loc++)
        if (used[loc]) write_location(&x, loc);
    write_tail(&x, q, o);
    gz_deflate(&g, Z_FINISH);
    deflateEnd(&g.z);

    free(used);
    free(x.mapping);
    free(x.module_limit);
    free(x.msg.b);
    free(x.sub.b);
    free(g.top.b);
    idmap_free(&x.functions);
    strtab_free(&x.strings);
    free(site_c);
    sites_free(&s);
    return 0;
}
