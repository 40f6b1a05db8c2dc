/* diff's outputs other than its table (diff_out.c): --fold's "path A B"
 * lines and --flame's differential flame graph. */
#ifndef MPQUERY_DIFF_H
#define MPQUERY_DIFF_H

#include "flame.h"
#include "listing.h"

/* --fold: a line per path with a value on either side (a, b: per node of
 * l->t), as difffolded.pl writes them; csv 'path,a,b', json. */
void diff_fold(struct listing *l, const int64_t *a, const int64_t *b);
/* --flame: B's widths, coloured by the change from A, per subtree; 0 or
 * flame_write's exit code. */
int diff_flame(struct listing *l, const struct flame_opts *f);

#endif
