/* mpquery serve's /flame (serve.h): its page (the links, the search
 * form; reverse=1 over the leaf-first tree, built level by level only as
 * wide as it is drawn) and the graph, an SVG of the frames of a tree at
 * least 1/1000 of the zoomed node's width (breadth first, so that a cut
 * falls on the deepest frames: at most MAX_FRAMES), the zoomed node's
 * ancestors as full-width bars; the root at the top (icicle, as mpquery
 * flame draws) or, icicle=0, at the bottom. Clicking a frame zooms to it:
 * serve.js puts its path, from the frames' data-p (the parent's index)
 * and data-name (its name as fold writes it), in the URL's zoom. search=RE
 * marks the frames whose name matches and says the share of the width
 * under them. */
#include "mpquery.h"
#include "dtree.h"
#include "listing.h"
#include "output.h"
#include "serve.h"
#include "opt_groups.h"
#include "view.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 6000
#define WIDTH 1200.0
#define ROW 17
#define PAGE_TIP_CHARS 300  /* report's page: a frame's tooltip shows this much of its name */

struct item { uint32_t node, parent_item; double x, w; int depth; };

/* The node named by path in t (children built), or as far as it goes. */
uint32_t serve_node_of(struct dtree *t, const char *path)
{
    if (t->children_ready < 2) dtree_children(t, 1);
    uint32_t cur = 0;
    struct strbuf e = { 0 };
    while (path && *path) {
        const char *semi = strchr(path, ';');
        size_t len = semi ? (size_t)(semi - path) : strlen(path);
        uint32_t found = NONE;
        for (uint32_t i = t->child_start[cur]; i < t->child_start[cur + 1] && found == NONE; i++) {
            uint32_t c = t->child_list[i];
            e.len = 0;
            fold_escape(t->labels.str[t->label[c]], t->labels.len[t->label[c]], &e);
            if (e.len == len && !memcmp(e.s, path, len)) found = c;
        }
        if (found == NONE) break;
        cur = found;
        path = semi ? semi + 1 : NULL;
    }
    sb_free(&e);
    return cur;
}

/* Frames matching search, per node: the path down to it has a match. */
static uint8_t *matches(const struct dtree *t, const char *search, int *rc)
{
    regex_t re;
    int e = regcomp(&re, search, REG_EXTENDED | REG_NOSUB);
    if (e) {
        char why[200];
        regerror(e, &re, why, sizeof why);
        *rc = error(EXIT_BAD_INPUT, "flame: bad value '%s' for search (expected a POSIX ERE: %s)", search, why);
        return NULL;
    }
    uint8_t *lab = xcalloc(t->labels.n + 1, 1), *m = xcalloc(t->n, 1);
    for (uint32_t l = 0; l < t->labels.n; l++) lab[l] = regexec(&re, t->labels.str[l], 0, NULL, 0) == 0;
    for (uint32_t n = 1; n < t->n; n++) m[n] = m[t->parent[n]] || lab[t->label[n]];
    regfree(&re);
    free(lab);
    return m;
}

static void frame(struct strbuf *sb, const struct dtree *t, const struct item *it, size_t i, int64_t v,
                  int64_t total, int y, int marked, int in_page)
{
    const char *name = it->node ? t->labels.str[t->label[it->node]] : "all";
    size_t len = it->node ? t->labels.len[t->label[it->node]] : 3;
    uint32_t h = (uint32_t)hash_bytes(name, len);
    if (in_page) {
        sb_puts(sb, "<g class=\"f\"><title>");
        xml_escape(sb, name, len, PAGE_TIP_CHARS);
    } else {
        sb_printf(sb, "<g class=\"f%s\" data-i=\"%zu\" data-p=\"%ld\" data-name=\"", marked ? " m" : "", i,
                  it->parent_item == NONE ? -1L : (long)it->parent_item);
        struct strbuf e = { 0 };
        if (it->node) fold_escape(name, len, &e);
        xml_escape(sb, e.s ? e.s : "", e.len, (size_t)-1);
        sb_free(&e);
        sb_puts(sb, "\"><title>");
        xml_escape(sb, name, len, 2000);
    }
    sb_printf(sb, " (%lld, %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"hsl(%u,80%%,%u%%)\"/>",
              (long long)v, total ? 100.0 * (double)v / (double)total : 0.0, it->x, y, it->w, ROW - 1,
              10 + h % 40, 55 + (h >> 8) % 15);
    size_t chars = (size_t)(it->w / 7);
    if (chars >= 3) {
        sb_printf(sb, "<text x=\"%.1f\" y=\"%d\">", it->x + 3, y + ROW - 5);
        xml_escape(sb, name, len, chars);
        sb_puts(sb, "</text>");
    }
    sb_puts(sb, "</g>\n");
}

/* The items to draw: zoom's ancestors, zoom, then its descendants at
 * least min wide, breadth first. */
static size_t layout(struct dtree *t, const int64_t *sub, uint32_t zoom, double min, struct item **out, size_t *cut)
{
    size_t n = 0, cap = 256;
    struct item *it = xmalloc(cap * sizeof *it);
    uint32_t chain[1024];
    int depth = 0;
    for (uint32_t x = zoom; depth < 1024; x = t->parent[x]) {
        chain[depth++] = x;
        if (x == 0) break;
    }
    for (int d = depth; d-- > 0;)
        it[n] = (struct item){ chain[d], n ? (uint32_t)(n - 1) : NONE, 0, WIDTH, depth - 1 - d }, n++;
    if (t->children_ready < 2) dtree_children(t, 1);
    double scale = WIDTH / (double)sub[zoom];
    for (size_t q = n - 1; q < n; q++) {
        double x = it[q].x;
        for (uint32_t c = t->child_start[it[q].node]; c < t->child_start[it[q].node + 1]; c++) {
            uint32_t k = t->child_list[c];
            double w = (double)sub[k] * scale;
            if (w < min) continue;
            if (n == MAX_FRAMES) {
                (*cut)++;
                continue;
            }
            if (n == cap) it = xrealloc(it, (cap *= 2) * sizeof *it);
            it[n++] = (struct item){ k, (uint32_t)q, x, w, it[q].depth + 1 };
            x += w;
        }
    }
    *out = it;
    return n;
}

/* The line over the graph: the total, the search's share. */
static void heading(const struct dtree *t, const int64_t *sub, const counters *own, int k, uint32_t zoom,
                    const uint8_t *m, const char *search)
{
    printf("<p class=figures>%s of the graph: <b>%lld</b>", counter_name[k], (long long)sub[zoom]);
    if (zoom) printf(" (%.2f%% of all)", sub[0] ? 100.0 * (double)sub[zoom] / (double)sub[0] : 0.0);
    if (m) {
        int64_t hit = 0;
        uint8_t *in = xcalloc(t->n, 1);
        in[zoom] = 1;
        for (uint32_t n = zoom + 1; n < t->n; n++) in[n] = in[t->parent[n]];
        for (uint32_t n = 0; n < t->n; n++)
            if (in[n] && m[n]) hit = sat_add(hit, own[n].v[k]);
        free(in);
        struct strbuf sb = { 0 };
        xml_escape(&sb, search, strlen(search), 200);
        printf("; search <code>%s</code> matched <b class=matched>%lld</b> (%.2f%%)", sb.s, (long long)hit,
               sub[zoom] ? 100.0 * (double)hit / (double)sub[zoom] : 0.0);
        sb_free(&sb);
    }
    printf("</p>\n");
}

/* The graph's SVG: its items, breadth first; in report's page at most
 * r->flame_bytes of frames (the deepest cut). The root at the top
 * (icicle) or at the bottom. */
static void draw(const struct serve_req *r, const struct dtree *t, const struct item *it, size_t n, const int64_t *sub,
                 uint32_t zoom, const uint8_t *m, int icicle, size_t cut)
{
    struct strbuf frames = { 0 };
    size_t drawn = 0;
    int maxd = 0;
    for (int pass = icicle ? 1 : 0; pass < 2; pass++) {
        /* the root at the bottom: a first pass finds the levels drawn */
        int h = (maxd + 1) * ROW;
        frames.len = 0;
        for (drawn = 0; drawn < n && !(r->flame_bytes && frames.len > r->flame_bytes); drawn++) {
            if (it[drawn].depth > maxd) maxd = it[drawn].depth;
            int y = icicle ? it[drawn].depth * ROW : h - (it[drawn].depth + 1) * ROW;
            frame(&frames, t, &it[drawn], drawn, sub[it[drawn].node], sub[zoom], y, m && m[it[drawn].node],
                  r->in_page != NULL);
        }
    }
    int h = (maxd + 1) * ROW;
    printf("<svg class=flame viewBox=\"0 0 %.0f %d\" width=\"%.0f\" height=\"%d\">\n", WIDTH, h, WIDTH, h);
    fwrite(frames.s, 1, frames.len, stdout);
    printf("</svg>\n");
    sb_free(&frames);
    if (r->in_page)
        printf("<p class=note>%zu frames: those at least %.2f px wide of %.0f%s. <a href=\"#serve\">mpquery serve</a> "
               "zooms, searches and draws the rest.</p>\n", drawn, r->flame_min, WIDTH,
               drawn < n || cut ? ", the deepest cut to keep the page small" : "");
    else if (cut)
        printf("<p class=note>%zu frames past the first %d not drawn: zoom in</p>\n", cut, MAX_FRAMES);
}

static int flame(const struct serve_req *r, const struct dtree *ct, const counters *own, int k, uint32_t zoom,
                 const char *search, int icicle)
{
    struct dtree *t = (struct dtree *)ct;       /* only its child lists are built */
    int rc = 0;
    uint8_t *m = search ? matches(t, search, &rc) : NULL;
    if (rc) return rc;
    int64_t *sub = xmalloc(t->n * sizeof *sub);
    dtree_subtotal_of(t, own, k, sub);
    heading(t, sub, own, k, zoom, m, search);
    if (sub[zoom] <= 0) {
        printf("<p class=note>nothing to draw: no %s here</p>\n", counter_name[k]);
        free(sub), free(m);
        return 0;
    }
    struct item *it;
    size_t cut = 0, n = layout(t, sub, zoom, r->in_page ? r->flame_min : WIDTH / 1000, &it, &cut);
    draw(r, t, it, n, sub, zoom, m, icicle, cut);
    free(it), free(sub), free(m);
    return 0;
}

/* ---------------------------------------------------------------- the page */
/* The paths of t with a value of counter k (own), rebuilt into out
 * (dtree_init'ed) leaf first, for the reversed flame graph, their values
 * into *out_own: one level a round, each path going on only while its
 * node holds at least 1/1000 of the total (the graph does not draw
 * narrower frames; min: that width, -1: 1/1000 of the whole), its value
 * hung on the last node it reached. */
static void reroot(const struct dtree *t, const counters *own, int k, int64_t min, struct dtree *out,
                   counters **out_own)
{
    uint32_t *map = none_array(t->labels.n), *alive = xmalloc(t->n * sizeof *alive);
    uint32_t *at = xmalloc(t->n * sizeof *at), *cur = xmalloc(t->n * sizeof *cur);
    size_t n_alive = 0, cap = 1024;
    int64_t total = 0, *sub = xcalloc(cap, sizeof *sub);
    for (uint32_t n = 1; n < t->n; n++)
        if (own[n].v[k] > 0) alive[n_alive] = n, at[n] = n, cur[n] = 0, n_alive++, total = sat_add(total, own[n].v[k]);
    if (min < 0) min = total / 1000;
    while (n_alive) {
        for (size_t i = 0; i < n_alive; i++) {
            uint32_t n = alive[i], l = t->label[at[n]];
            if (map[l] == NONE) map[l] = strtab_intern(&out->labels, t->labels.str[l], t->labels.len[l]);
            cur[n] = dtree_child(out, cur[n], map[l]);
            if (out->n > cap) {
                sub = xrealloc(sub, 2 * out->cap * sizeof *sub);
                memset(sub + cap, 0, (2 * out->cap - cap) * sizeof *sub);
                cap = 2 * out->cap;
            }
            sub[cur[n]] = sat_add(sub[cur[n]], own[n].v[k]);
            at[n] = t->parent[at[n]];
        }
        size_t m = 0;
        for (size_t i = 0; i < n_alive; i++)
            if (at[alive[i]] != 0 && sub[cur[alive[i]]] >= min) alive[m++] = alive[i];
        n_alive = m;
    }
    counters *o = xcalloc(out->n, sizeof *o);
    for (uint32_t n = 1; n < t->n; n++)
        if (own[n].v[k] > 0) counters_add(&o[cur[n]], &own[n]);
    free(map), free(alive), free(at), free(cur), free(sub);
    *out_own = o;
}

/* A flag parameter: given and not "0". */
static int flag(const struct serve_req *r, const char *key, int deflt)
{
    const char *v = serve_param(r, key);
    return v ? strcmp(v, "0") != 0 : deflt;
}

/* The flame graph's links (flame or icicle, reversed or not: a link
 * sets the parameter to the other value, and keeps the view's others;
 * reversing drops the zoom, a path of the other tree) and its search
 * form, which keeps every other parameter. */
static void flame_controls(const struct serve_req *r)
{
    static const char *const toggles[][3] = { { "icicle", "root at the bottom", "root at the top" },
                                              { "reverse", "callers first (reversed)", "callees first" } };
    struct strbuf sb = { 0 }, x = { 0 };
    sb_puts(&sb, "<p class=controls>");
    for (size_t i = 0; i < 2; i++) {
        int on = flag(r, toggles[i][0], i == 0);
        x.len = 0;
        sb_printf(&x, "%s=%d", toggles[i][0], !on);
        for (size_t j = 0; j < r->nparams; j++) {
            const char *k = r->params[j].key;
            if (!strcmp(k, "token") || !strcmp(k, toggles[i][0]) || (i == 1 && !strcmp(k, "zoom")) ||
                !r->params[j].value[0] || serve_is_state(k))
                continue;
            sb_printf(&x, "&%s=", k), url_encode(&x, r->params[j].value);
        }
        sb_puts(&sb, "<a class=toggle href=\"");
        serve_link(&sb, r, "/flame", x.s);
        sb_printf(&sb, "\">%s</a> ", toggles[i][on ? 1 : 2]);
    }
    sb_puts(&sb, "</p>\n<form class=search method=get action=\"/flame\">");
    for (size_t j = 0; j < r->nparams; j++) {
        if (!strcmp(r->params[j].key, "search") || !r->params[j].value[0]) continue;
        sb_puts(&sb, "<input type=hidden name=\"");
        xml_escape(&sb, r->params[j].key, strlen(r->params[j].key), 100);
        sb_puts(&sb, "\" value=\"");
        xml_escape(&sb, r->params[j].value, strlen(r->params[j].value), (size_t)-1);
        sb_puts(&sb, "\">");
    }
    const char *q = serve_param(r, "search");
    sb_puts(&sb, "<input name=search placeholder=\"search (ERE)\" value=\"");
    if (q) xml_escape(&sb, q, strlen(q), (size_t)-1);
    sb_puts(&sb, "\"><button>search</button></form>\n");
    fwrite(sb.s, 1, sb.len, stdout);
    sb_free(&sb);
    sb_free(&x);
}

int serve_flame_page(const struct serve_req *r, struct listing *l)
{
    if (!r->in_page) flame_controls(r);
    int rev = flag(r, "reverse", 0), by = l->c->out.by;
    struct dtree rt, *t = &l->t;
    counters *own = l->own[0];
    uint32_t zoom;
    /* reversed: built as wide as the graph draws; zoomed, again as wide as
     * the zoomed frame's graph; with a search whole (the share matched
     * counts the paths to their end) */
    if (rev) {
        dtree_init(&rt);
        reroot(&l->t, l->own[0], by, serve_param(r, "search") ? 0 : -1, &rt, &own);
        t = &rt;
        if (!serve_param(r, "search") && (zoom = serve_node_of(t, serve_param(r, "zoom"))) != 0) {
            int64_t *sub = xmalloc(t->n * sizeof *sub);
            dtree_subtotal_of(t, own, by, sub);
            int64_t min = sub[zoom] / 1000;
            free(sub);
            dtree_free(&rt), free(own);
            dtree_init(&rt);
            reroot(&l->t, l->own[0], by, min, &rt, &own);
        }
    }
    zoom = serve_node_of(t, serve_param(r, "zoom"));
    int rc = flame(r, t, own, by, zoom, serve_param(r, "search"), flag(r, "icicle", 1));
    if (rev) {
        dtree_free(&rt);
        free(own);
    }
    return rc;
}
