/* What view.c, which builds the display tree, uses of dtree.c beyond the
 * dtree functions declared in mpquery.h. */
#ifndef MPQUERY_DTREE_H
#define MPQUERY_DTREE_H

#include "mpquery.h"

/* The child of parent labelled label, added when new (children_ready
 * then cleared). */
uint32_t dtree_child(struct dtree *t, uint32_t parent, uint32_t label);

#endif
