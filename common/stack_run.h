/* The stack tree's rows as runs (format version 6, table stack_run):
 * nodes id, id + 1, ... each the parent of the next make one row, its
 * first id, the first node's parent and the frames as a JSON array. The
 * writers (the recorder's flush, merge, symbolize) add nodes parents
 * first; a node that does not extend the pending run ends it, and the
 * writer writes it before pushing the node. */
#ifndef MP_STACK_RUN_H
#define MP_STACK_RUN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct stack_run {
    int64_t first, parent, last;    /* the pending run: its first id, that node's parent, its last id */
    char *text;                     /* "[f1,f2,..." (len bytes; empty: no pending run) */
    size_t len, cap;
};

/* Whether node (id, parent) extends the pending run. */
static inline int stack_run_extends(const struct stack_run *r, int64_t id, int64_t parent)
{
    return r->len && id == r->last + 1 && parent == r->last;
}

/* Appends the node to the pending run, or starts one with it; -1: out of
 * memory. */
static inline int stack_run_push(struct stack_run *r, int64_t id, int64_t parent, int64_t frame)
{
    if (r->cap - r->len < 32) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        char *t = realloc(r->text, cap);
        if (!t) return -1;
        r->text = t, r->cap = cap;
    }
    char sep = r->len ? ',' : '[';
    if (!r->len) r->first = id, r->parent = parent;
    r->text[r->len++] = sep;
    r->len += (size_t)snprintf(r->text + r->len, r->cap - r->len, "%lld", (long long)frame);
    r->last = id;
    return 0;
}

/* The pending run's frames, "[f1,...]" (*len bytes, not terminated),
 * valid until the next push, and no run pending; NULL: none was. */
static inline const char *stack_run_take(struct stack_run *r, size_t *len)
{
    if (!r->len) return NULL;
    r->text[r->len++] = ']';
    *len = r->len;
    r->len = 0;
    return r->text;
}

static inline void stack_run_free(struct stack_run *r)
{
    free(r->text);
    r->text = NULL;
    r->len = r->cap = 0;
}

#endif
