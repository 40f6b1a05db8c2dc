/* All of the recorder's internal declarations (never installed): base.h
 * (macros, options, log, arena, guard, signals, life), record.h (the
 * recording path) and symbols.h (libdwfl). Files off the hot path include
 * this; the hot path includes record.h. */
#ifndef MP_INTERNAL_H
#define MP_INTERNAL_H

#include "symbols.h"

#endif
