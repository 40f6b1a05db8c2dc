/* dtree.c's functions not declared in view.h: what view.c, which builds
 * the display tree, uses, and the JSON frame of fold lines. */
#ifndef MPQUERY_DTREE_H
#define MPQUERY_DTREE_H

#include "output.h"
#include "view.h"

/* The child of parent labelled label, added when new (children_ready
 * then cleared). */
uint32_t dtree_child(struct dtree *t, uint32_t parent, uint32_t label);

/* The JSON around fold lines (fold, diff --fold): {"by": BY (a counter),
 * "stacks": [ ... ]} and a newline; the lines are the caller's elements. */
void fold_json_start(struct json *w, FILE *f, const char *by);
void fold_json_end(struct json *w);

#endif
