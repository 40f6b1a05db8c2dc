/* Python first (issue 43): in a stack with Python frames, the display
 * path starts at its outermost Python frame, and below it the frames of
 * the interpreter are folded into the Python frame they serve (its
 * evaluation loop, calls, vectorcalls, object and memory allocators:
 * PyList_New < PyObject_Malloc under `b` is `b`), as memray shows Python
 * stacks. What stays between and under the Python frames is the native
 * code that is not the interpreter's: an extension module's functions
 * (_json's encoder, numpy's), a library's (sqlite3_step, opendir), the
 * frames a user can act on. A stack without a Python frame (a C program,
 * the interpreter's start-up) is not changed; --native shows every frame.
 *
 * The interpreter is found by module, not by a list of names: its
 * modules are those of the native frames that call a Python frame (the
 * recorder puts a Python frame where its evaluation loop frame was, and
 * only the interpreter calls that loop: _PyEval_Vector, PyEval_EvalCode,
 * gen_send_ex), so it is libpython3.X.so with a shared build, the
 * python3.X executable with a static one (Debian's: its built-in modules
 * are folded with it), whatever the file is named, and nothing in a
 * profile without Python frames.
 *
 * The result is flags added to each stack's frame, applied by view.c as
 * the rules' are: RULE_ROOT on the outermost Python frame (a root rule:
 * what ran the code, start-up or a thread's start, is cut, and the
 * consumers of the display tree see a restarted path, as they know it),
 * RULE_DROP on the interpreter's frames below it. Totals never change;
 * stacks whose paths become equal share one display node. */
#include "mpquery.h"
#include "rules.h"
#include "view.h"

#include <stdlib.h>

/* Per frame: 1 when it is a Python frame. */
static uint8_t *python_frames(const struct profile *p, size_t *count)
{
    uint8_t *py = xcalloc(p->nframes ? p->nframes : 1, 1);
    *count = 0;
    for (size_t f = 0; f < p->nframes; f++) *count += py[f] = (uint8_t)frame_is_python(p, &p->frames[f]);
    return py;
}

/* Per module: 1 when a native frame of it calls a Python frame. */
static uint8_t *interpreter_modules(const struct profile *p, const uint8_t *py)
{
    uint8_t *interp = xcalloc(p->nmodules ? p->nmodules : 1, 1);
    for (size_t s = 0; s < p->nstacks; s++) {
        const struct stack *st = &p->stacks[s];
        if (st->parent == NONE || !py[st->frame]) continue;
        uint32_t caller = p->stacks[st->parent].frame, m = p->frames[caller].module;
        if (!py[caller] && !p->modules[m].special) interp[m] = 1;
    }
    return interp;
}

uint8_t *view_python_flags(const struct profile *p)
{
    size_t npy;
    uint8_t *py = python_frames(p, &npy);
    if (!npy) {
        free(py);
        return NULL;
    }
    uint8_t *interp = interpreter_modules(p, py);
    uint8_t *flags = xcalloc(p->nstacks ? p->nstacks : 1, 1);
    uint8_t *under = xcalloc(p->nstacks ? p->nstacks : 1, 1);     /* the path has a Python frame */
    for (size_t k = 0; k < p->nstacks; k++) {
        uint32_t s = p->stack_order[k];
        const struct stack *st = &p->stacks[s];
        int above = st->parent != NONE && under[st->parent];
        under[s] = (uint8_t)(above || py[st->frame]);
        if (py[st->frame] && !above) flags[s] = RULE_ROOT;
        else if (above && interp[p->frames[st->frame].module]) flags[s] = RULE_DROP;
    }
    free(under);
    free(interp);
    free(py);
    return flags;
}
