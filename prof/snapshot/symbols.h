/* The symbol side of the recorder (never installed): return addresses to
 * names with libdwfl, over the objects the loader has loaded. */
#ifndef MP_SYMBOLS_H
#define MP_SYMBOLS_H

#include "record.h"
/* ------------------------------------------------------------ symbols.c */
#include "resolve.h"     /* struct sym_frame */
/* Resolves addr into its inline chain, outermost first. The result stays
 * valid for the life of the process. Returns the number of frames (>= 1). */
int symbols_resolve(uintptr_t addr, const struct sym_frame **frames);
#include "dwfl_session.h"     /* mp_dwfl_session (capture) */
/* Resolves every return address of every interned stack not resolved yet
 * (called by the flush, and by dlclose before a module goes away). */
size_t symbols_resolve_pending(void);    /* returns how many were new */
void symbols_trim(void);                 /* the session's file pages given back (mp_dwfl_release_pages) */
/* After libdw failed inside a resolution (RECOVERABLE): its session is
 * left as it is (not ended: its state is unknown), a new one made next. */
void symbols_drop_session(void);
/* The same with the objects as last reported (just after an unload, to name
 * what the unloaded object's destructors allocated). */
size_t symbols_resolve_pending_as_before(void);
/* A retired pseudo address for addr (a resolved address of an unloaded
 * object), resolving to what addr did; addr itself is forgotten by
 * symbols_forget_retired. */
uintptr_t symbols_retire(uintptr_t addr);
void symbols_forget_retired(void);
/* Every session ended and every address forgotten (a detach). */
void symbols_release(void);

/* dump.c: mp_dump's work; ensure_init the profiler's start (process/) */
int dump_write(int fd, const char *by, int n, void (*ensure_init)(void));

#endif
