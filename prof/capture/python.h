/* CPython frames in native stacks, and pymalloc's blocks as heap blocks
 * (python.c). Python frames are pseudo return addresses (PYFRAME_BASE +
 * id) named at the flush like any frame, so the stack tree, the caches and
 * every mpquery command take them as they are. */
#ifndef MP_PYTHON_H
#define MP_PYTHON_H

#include "capture.h"

/* Pseudo addresses of Python frames: below the mapping kinds' names, far
 * above the retired addresses' growth from RETIRED_BASE. */
#define PYFRAME_BASE (TAG_BASE - ((uintptr_t)1 << 40))
#define PYFRAME_MAX (1u << 24)

extern int mp_py_on;                    /* the frame chain is read (set once, at init) */
extern _Atomic int mp_py_waiting;       /* pymalloc's allocators still to be wrapped */

/* At the recorder's init, outside malloc; full: full capture (mp_track_all) */
void python_init(int full);
int python_gil_ready(void);             /* the runtime initialized, not finalizing, its GIL the caller's */
/* pymalloc_domains.c: while mp_py_waiting, from the recording path
 * (full capture's, the cheap modes' sampled one): pymalloc's domains
 * wrapped once a GIL holder allocates */
void python_install(void);
/* The end of an attach session: the frame tables given back, the code
 * objects' hook taken out (python_forget, nothing able to intern a frame);
 * pymalloc's domains given their own allocators again by the next GIL
 * holder's call (pymalloc_forget, pymalloc_domains.c). A new session puts
 * both back (python_session_start). */
void python_forget(void);
void pymalloc_forget(void);
void python_session_start(void);

/* The calling thread's Python frames, read from its thread state and kept
 * in pf (pf->n), fed to *h; their number (0: none). Inside malloc: no
 * allocation, no lock, no call into Python. */
int python_walk(struct mp_pyframes *pf, struct mp_hash *h);

/* The captured stack in (native frames in[0..nnative), then n - nnative
 * tags) with each native evaluation-loop frame replaced by the Python
 * frames it runs (pf), into out (room for n + MP_PY_FRAMES); returns
 * its length. On a stack cache miss only: it interns the frames. */
int python_splice(struct mp_pyframes *pf, const uintptr_t *in, int nnative, int n, uintptr_t *out);

void python_lock(void);                 /* fork: the frame tables consistent in the child */
void python_unlock(void);

/* A Python frame's names (addr a pseudo address of one): 1, or 0. */
int python_frame(uintptr_t addr, const char **function, const char **file, int *line);

#endif
