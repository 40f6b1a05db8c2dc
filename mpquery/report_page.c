/* The HTML page of mpquery report: the skeleton, its style and script
 * (inline: the page loads nothing, no font, no script, no picture), and
 * the pieces of its sections. Invariants: every text from the profile
 * goes through xml_escape (markup escaped, control characters as spaces,
 * invalid UTF-8 as U+FFFD), so the page is valid UTF-8 and no name can
 * open an element; the scripts never contain "</" (the end of a script
 * element). Without JavaScript the page is complete: the tab bars are
 * hidden and every tab's content shown in turn. */
#include "flame.h"
#include "report.h"
#include "output.h"
#include "view.h"

#include <string.h>

#define NAME_CHARS 400      /* a name in a cell shows at most this much (its tooltip: TIP_CHARS) */
#define TIP_CHARS 2000
#define TIP_FRAMES 100      /* a path's tooltip: at most this many frames */

static const char style[] =
"body { margin: 0; background: #f3f4f6; color: #1d232b;\n"
"  font: 14px/1.45 system-ui, -apple-system, \"Segoe UI\", Roboto, \"DejaVu Sans\", \"Liberation Sans\", sans-serif; }\n"
"header { background: #24313f; color: #fff; padding: 16px 24px 0; }\n"
"header h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; }\n"
"header p { margin: 0; color: #c6d0db; font-size: 13px; }\n"
"header .status { color: #f3c26b; margin-top: 4px; }\n"
"header .status.ready { color: #9ad29a; }\n"
"nav { display: flex; flex-wrap: wrap; gap: 4px 18px; padding: 10px 0 10px; }\n"
"nav a { color: #9fcfff; text-decoration: none; }\n"
"nav a:hover { text-decoration: underline; }\n"
"main { max-width: 1240px; margin: 0 auto; padding: 4px 12px 32px; }\n"
"section { background: #fff; border: 1px solid #dce0e5; border-radius: 6px; margin: 14px 0; padding: 2px 16px 12px; }\n"
"h2 { font-size: 18px; margin: 12px 0 10px; }\n"
"h3 { font-size: 14px; margin: 12px 0 6px; color: #3a4653; }\n"
".cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(175px, 1fr)); gap: 10px; }\n"
".card { border: 1px solid #e2e6eb; border-radius: 6px; padding: 7px 12px; background: #fafbfc; }\n"
".card .k { color: #5a6672; font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }\n"
".card .v { font-size: 22px; font-weight: 600; }\n"
".card .x { color: #5a6672; font-size: 12px; }\n"
".cmd { font-family: ui-monospace, \"DejaVu Sans Mono\", monospace; font-size: 12px; background: #f3f5f7;\n"
"  padding: 6px 10px; border-radius: 4px; white-space: pre-wrap; word-break: break-all; }\n"
".tabs { display: none; flex-wrap: wrap; gap: 6px; margin: 4px 0 8px; }\n"
".js .tabs { display: flex; }\n"
".tabs button { font: inherit; font-size: 13px; color: #1d232b; border: 1px solid #c8d0d9; background: #f3f5f7;\n"
"  border-radius: 14px; padding: 2px 12px; cursor: pointer; }\n"
".tabs button:hover { border-color: #1a5fb4; }\n"
".tabs button.on { background: #1a5fb4; border-color: #1a5fb4; color: #fff; }\n"
".plot svg, .pane svg { display: block; max-width: 100%; height: auto; }\n"
".scroll { overflow-x: auto; }\n"
"table { border-collapse: collapse; font-size: 13px; }\n"
"th, td { padding: 3px 8px; border-bottom: 1px solid #eceff2; text-align: left; white-space: nowrap; }\n"
"th { background: #f3f5f7; font-weight: 600; color: #3a4653; }\n"
"th.n, td.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
"th.hl, td.hl { background: #fff3d6; }\n"
"tr:hover td { background: #eef5ff; }\n"
"td.where, td.name { max-width: 560px; overflow: hidden; text-overflow: ellipsis;\n"
"  font-family: ui-monospace, \"DejaVu Sans Mono\", monospace; font-size: 12px; }\n"
"td.share { font-variant-numeric: tabular-nums; font-size: 12px; color: #3a4653; }\n"
".bar { display: inline-block; width: 64px; height: 8px; margin-right: 6px; vertical-align: middle;\n"
"  background: #e8ecf0; border-radius: 4px; overflow: hidden; }\n"
".bar i { display: block; height: 100%; background: #e07b39; }\n"
".note { color: #5a6672; font-size: 12px; }\n"
".swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; }\n"
"p.leaks { font-size: 15px; }\n";

/* Tabs: a bar per group (data-group), a button per tab (data-tab), shown
 * only with JavaScript; the panes of the group (.pane, the same data-group)
 * but the chosen one hidden. The address's fragment names the chosen
 * tabs (#GROUP=TAB&...), for a link to what one sees. Then every flame
 * graph is made interactive (flame.c's flameGraph), and #status says it
 * all ran. */
static const char script[] =
"(function () {\n"
"'use strict';\n"
"function each(list, fn) { Array.prototype.forEach.call(list, fn); }\n"
"document.documentElement.className += ' js';\n"
"var graphs = 0, frames = 0, groups = 0, chosen = {};\n"
"each(document.querySelectorAll('svg.flame'), function (svg) { frames += flameGraph(svg); graphs++; });\n"
"location.hash.slice(1).split('&').forEach(function (kv) {\n"
"  var i = kv.indexOf('=');\n"
"  if (i > 0) try { chosen[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (err) { /* left out */ }\n"
"});\n"
"function saveState() {\n"
"  var p = [];\n"
"  for (var k in chosen) p.push(k + '=' + encodeURIComponent(chosen[k]));\n"
"  try { history.replaceState(null, '', '#' + p.join('&')); } catch (err) { /* a file: URL may refuse */ }\n"
"}\n"
"each(document.querySelectorAll('.tabs'), function (bar) {\n"
"  var group = bar.getAttribute('data-group'), buttons = bar.querySelectorAll('button[data-tab]');\n"
"  var panes = document.querySelectorAll('.pane[data-group=\"' + group + '\"]');\n"
"  if (!buttons.length) return;\n"
"  function show(tab, save) {\n"
"    var known = false;\n"
"    each(buttons, function (b) { known = known || b.getAttribute('data-tab') === tab; });\n"
"    if (!known) tab = buttons[0].getAttribute('data-tab');\n"
"    each(panes, function (p) { p.hidden = p.getAttribute('data-tab') !== tab; });\n"
"    each(buttons, function (b) { b.className = b.getAttribute('data-tab') === tab ? 'on' : ''; });\n"
"    if (save) { chosen[group] = tab; saveState(); }\n"
"  }\n"
"  bar.addEventListener('click', function (ev) {\n"
"    var tab = ev.target.getAttribute && ev.target.getAttribute('data-tab');\n"
"    if (tab) show(tab, true);\n"
"  });\n"
"  show(chosen[group], false);\n"
"  groups++;\n"
"});\n"
"var status = document.getElementById('status');\n"
"status.textContent = 'Interactive: ' + graphs + ' flame graphs (' + frames + ' frames), ' + groups + ' tab groups.';\n"
"status.className = 'status ready';\n"
"})();\n";

void page_textn(struct page *pg, const char *s, size_t n, size_t max)
{
    pg->sb.len = 0;
    xml_escape(&pg->sb, s, n, max);
    if (pg->sb.len) fwrite(pg->sb.s, 1, pg->sb.len, pg->f);
}

void page_text(struct page *pg, const char *s) { page_textn(pg, s, strlen(s), SIZE_MAX); }

void page_start(struct page *pg, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n", pg->f);
    fprintf(pg->f, "<meta name=\"generator\" content=\"mpquery %s\">\n<title>", MPQ_VERSION);
    page_text(pg, title);
    fprintf(pg->f, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<header>\n<h1>", style, flame_style);
    page_text(pg, title);
    fputs("</h1>\n", pg->f);
}

void page_nav(struct page *pg, int ledger)
{
    fputs("<p class=\"status\" id=\"status\">A static page: its tabs, zoom and search need JavaScript.</p>\n"
          "<nav><a href=\"#summary\">Summary</a><a href=\"#timeline\">Memory over time</a>", pg->f);
    if (ledger) fputs("<a href=\"#rss\">Resident memory</a>", pg->f);
    fputs("<a href=\"#flame\">Flame graphs</a><a href=\"#stacks\">Stacks</a><a href=\"#functions\">Functions</a>"
          "<a href=\"#leaks\">Leaks</a><a href=\"#threads\">Processes and threads</a></nav>\n</header>\n<main>\n",
          pg->f);
}

void page_end(struct page *pg)
{
    fprintf(pg->f, "</main>\n<script>\n%s%s</script>\n</body>\n</html>\n", flame_script, script);
}

void page_section(struct page *pg, const char *id, const char *title)
{
    fprintf(pg->f, "<section id=\"%s\">\n<h2>", id);
    page_text(pg, title);
    fputs("</h2>\n", pg->f);
}

void page_card(struct page *pg, const char *label, uint32_t counter, int64_t v, const char *note)
{
    char h[64];
    fputs("<div class=\"card\"><div class=\"k\">", pg->f);
    page_text(pg, label);
    if (counter != NONE)
        fprintf(pg->f, "</div><div class=\"v\" title=\"%lld\">%s", (long long)v, fmt_human((int)counter, v, h, sizeof h));
    else
        fputs("</div><div class=\"v\">", pg->f);
    if (counter == NONE && note) page_text(pg, note);
    fputs("</div>", pg->f);
    if (counter != NONE && note) {
        fputs("<div class=\"x\">", pg->f);
        page_text(pg, note);
        fputs("</div>", pg->f);
    }
    fputs("</div>\n", pg->f);
}

void page_card_counter(struct page *pg, const char *label, int counter, int64_t v, const char *unit)
{
    struct strbuf note = { 0 };
    sb_printf(&note, "%lld %s", (long long)v, unit);
    page_card(pg, label, (uint32_t)counter, v, note.s);
    sb_free(&note);
}

static void tab_button(struct page *pg, const struct view *v, const char *order)
{
    fprintf(pg->f, "<button type=\"button\" data-tab=\"%s%s%s\" title=\"", v->tab, order ? "-" : "", order ? order : "");
    page_text(pg, v->what);
    fprintf(pg->f, "\">%s%s%s</button>", v->at_peak ? "memlive at the peak" : counter_name[v->by], order ? " " : "",
            order ? order : "");
}

void page_tabs(struct page *pg, const char *group, const struct view *v, size_t n, int functions)
{
    fprintf(pg->f, "<div class=\"tabs\" data-group=\"%s\">", group);
    for (size_t i = 0; i < n; i++) {
        if (!functions) {
            tab_button(pg, &v[i], NULL);
        } else if (!v[i].at_peak) {
            tab_button(pg, &v[i], "self");
            tab_button(pg, &v[i], "inclusive");
        }
    }
    fputs("</div>\n", pg->f);
}

void page_pane_start(struct page *pg, const char *group, const char *tab)
{
    fprintf(pg->f, "<div class=\"pane\" data-group=\"%s\" data-tab=\"%s\">\n", group, tab);
}

void page_td(struct page *pg, int counter, int64_t v, int hl)
{
    char h[64];
    fprintf(pg->f, "<td class=\"n%s\" title=\"%lld\">%s</td>", hl ? " hl" : "", (long long)v,
            fmt_human(counter, v, h, sizeof h));
}

void page_share(struct page *pg, int64_t v, int64_t total)
{
    double share = total > 0 && v > 0 ? 100.0 * (double)v / (double)total : 0;
    if (share > 100) share = 100;
    fprintf(pg->f, "<td class=\"share\" title=\"%lld of %lld\"><span class=\"bar\"><i style=\"width: %.2f%%\"></i>"
                   "</span>%.1f%%</td>", (long long)v, (long long)total, share, share);
}

void page_stack_id(struct page *pg, int64_t id, uint32_t nmerged)
{
    if (nmerged > 1)
        fprintf(pg->f, "<td class=\"n\" title=\"stack %lld and %u more with the same path after rules\">%lld+%u</td>",
                (long long)id, nmerged - 1, (long long)id, nmerged - 1);
    else
        fprintf(pg->f, "<td class=\"n\" title=\"stack %lld: mpquery show DB %lld\">%lld</td>", (long long)id,
                (long long)id, (long long)id);
}

void page_where(struct page *pg, const struct dtree *t, uint32_t node, size_t depth)
{
    const struct strtab *l = &t->labels;
    size_t k = 0;
    fputs("<td class=\"where\" title=\"", pg->f);
    for (uint32_t n = node; n != 0 && n != NONE; n = t->parent[n], k++) {
        if (k == TIP_FRAMES) { fputs("&#10;...", pg->f); break; }
        if (k) fputs("&#10;", pg->f);
        page_textn(pg, l->str[t->label[n]], l->len[t->label[n]], TIP_CHARS);
    }
    fputs("\">", pg->f);
    k = 0;
    for (uint32_t n = node; n != 0 && n != NONE; n = t->parent[n], k++) {
        if (depth && k == depth) { fputs(" &lt; ...", pg->f); break; }
        if (k) fputs(" &lt; ", pg->f);
        page_textn(pg, l->str[t->label[n]], l->len[t->label[n]], NAME_CHARS);
    }
    fputs("</td>", pg->f);
}

void page_function(struct page *pg, const char *name, size_t n)
{
    fputs("<td class=\"name\" title=\"", pg->f);
    page_textn(pg, name, n, TIP_CHARS);
    fputs("\">", pg->f);
    page_textn(pg, name, n, NAME_CHARS);
    fputs("</td>", pg->f);
}

void page_table_start(struct page *pg) { fputs("<div class=\"scroll\"><table><thead><tr>", pg->f); }

void page_th(struct page *pg, const char *name, int numeric, int hl, const char *tip)
{
    fprintf(pg->f, "<th class=\"%s%s\"", numeric ? "n" : "", hl ? " hl" : "");
    if (tip) {
        fputs(" title=\"", pg->f);
        page_text(pg, tip);
        fputs("\"", pg->f);
    }
    fputs(">", pg->f);
    page_text(pg, name);
    fputs("</th>", pg->f);
}

void page_table_body(struct page *pg) { fputs("</tr></thead>\n<tbody>\n", pg->f); }

void page_table_end(struct page *pg) { fputs("</tbody></table></div>\n", pg->f); }
