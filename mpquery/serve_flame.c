/* mpquery serve's flame graph (serve.h): an SVG of the frames of a tree
 * at least 1/1000 of the zoomed node's width (breadth first, so that a
 * cut falls on the deepest frames: at most MAX_FRAMES), the zoomed
 * node's ancestors as full-width bars; root at the bottom (flame) or the
 * top (icicle=1). Clicking a frame zooms to it: serve.js puts its path,
 * from the frames' data-p (the parent's index) and data-name (its name as
 * fold writes it), in the URL's zoom. search=RE marks the frames whose
 * name matches and says the share of the width under them. */
#include "mpquery.h"
#include "output.h"
#include "serve.h"
#include "view.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 6000
#define WIDTH 1200.0
#define ROW 17

struct item { uint32_t node, parent_item; double x, w; int depth; };

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
                  int64_t total, int y, int marked)
{
    const char *name = it->node ? t->labels.str[t->label[it->node]] : "all";
    size_t len = it->node ? t->labels.len[t->label[it->node]] : 3;
    uint32_t h = (uint32_t)hash_bytes(name, len);
    sb_printf(sb, "<g class=\"f%s\" data-i=\"%zu\" data-p=\"%ld\" data-name=\"", marked ? " m" : "", i,
              it->parent_item == NONE ? -1L : (long)it->parent_item);
    struct strbuf e = { 0 };
    if (it->node) fold_escape(name, len, &e);
    xml_escape(sb, e.s ? e.s : "", e.len, (size_t)-1);
    sb_free(&e);
    sb_puts(sb, "\"><title>");
    xml_escape(sb, name, len, 2000);
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
static size_t layout(struct dtree *t, const int64_t *sub, uint32_t zoom, struct item **out, size_t *cut)
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
    if (!t->children_ready) dtree_children(t, 1);
    double scale = WIDTH / (double)sub[zoom], min = WIDTH / 1000;
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

int serve_flame(const struct dtree *ct, const counters *own, int k, uint32_t zoom, const char *search, int icicle)
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
    size_t cut = 0, n = layout(t, sub, zoom, &it, &cut);
    int maxd = 0;
    for (size_t i = 0; i < n; i++) if (it[i].depth > maxd) maxd = it[i].depth;
    int h = (maxd + 1) * ROW;
    struct strbuf sb = { 0 };
    sb_printf(&sb, "<svg class=flame viewBox=\"0 0 %.0f %d\" width=\"%.0f\" height=\"%d\">\n", WIDTH, h, WIDTH, h);
    for (size_t i = 0; i < n; i++) {
        int y = icicle ? it[i].depth * ROW : h - (it[i].depth + 1) * ROW;
        frame(&sb, t, &it[i], i, sub[it[i].node], sub[zoom], y, m && m[it[i].node]);
        if (sb.len > (1 << 20)) fwrite(sb.s, 1, sb.len, stdout), sb.len = 0;
    }
    sb_puts(&sb, "</svg>\n");
    fwrite(sb.s, 1, sb.len, stdout);
    if (cut) printf("<p class=note>%zu frames past the first %d not drawn: zoom in</p>\n", cut, MAX_FRAMES);
    sb_free(&sb);
    free(it), free(sub), free(m);
    return 0;
}
