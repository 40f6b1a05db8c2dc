/* CPython 3.11-3.13: the Python frames of every stack, and pymalloc's
 * blocks counted as heap blocks (issue 29, pymalloc.c).
 *
 * Frames: at each capture the calling thread's frame chain is read from its
 * PyThreadState with plain loads (no GIL, no allocation, no call into
 * Python but leaf functions of its C API), through one layout table per
 * minor version; in a sub-interpreter, the caller's frames follow. Its (code object, instruction offset) pairs are
 * hashed into the stack's hash, so the per-thread stack cache works as for
 * native frames; only on a miss (python_splice) each native evaluation-loop
 * frame (a return address inside _PyEval_EvalFrameDefault) is replaced by
 * the Python frames of its invocation, each interned as a pseudo address
 * PYFRAME_BASE + id of (code, line). Invariants: a frame id and its names
 * never change once published (the flush reads them without a lock); a code
 * object's death (PyCode_Type.tp_dealloc, hooked) forgets its entries and
 * bumps py_epoch, hashed into every Python stack, so a new code object at
 * the same address gets frames of its own. The walk runs under a fault
 * guard: a fault gives Python frames up for the process, with one warning.
 *
 * pymalloc's blocks: pymalloc_domains.c, and entry's wrappers
 * (entry/pymalloc.c). */
#define _GNU_SOURCE
#include "python.h"
#include "pymalloc_domains.h"
#include "u64map.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

/* ------------------------------------------------------------ layouts */

/* Byte offsets of the fields read, per minor version (from the headers of
 * 3.11.2/3.11.7, 3.12.1, and 3.13.0's _Py_DebugOffsets); -1: absent. */
struct py_layout {
    unsigned long minor;                /* PY_VERSION_HEX & 0xffff0000 */
    long rt_initialized, rt_finalizing; /* in _PyRuntime */
    long rt_tstate_current;             /* 3.11: the GIL holder's tstate */
    long rt_tss;                        /* Py_tss_t autoTSSkey: int initialized, key at +4 */
    long ts_cframe, cf_current, ts_current;     /* 3.11/3.12: ts->cframe->current_frame; 3.13: ts->current_frame */
    long ts_thread_id;
    long fr_code, fr_previous, fr_instr, fr_is_entry, fr_owner;
    int owner_cstack;                   /* 3.12+: an entry shim's owner; -1 */
    long co_filename, co_qualname, co_linetable, co_firstlineno, co_firsttraceable, co_code;
    long uni_ascii_size, uni_compact_size;
};
static const struct py_layout layouts[] = {
    { 0x030b0000, 16, 24, 576, 592, 56, 8, -1, 152, 32, 48, 56, 68, 69, -1, 112, 128, 136, 72, 168, 184, 48, 72 },
    { 0x030c0000, 16, 24, -1, 1544, 56, 0, -1, 136, 0, 8, 56, -1, 70, 3, 112, 128, 136, 68, 176, 192, 40, 56 },
    { 0x030d0000, 600, 608, -1, 2160, -1, -1, 72, 152, 0, 8, 56, -1, 70, 3, 112, 128, 136, 68, 184, 200, 40, 56 },
};
enum { OWNED_BY_GENERATOR = 1 };

#define AT(p, o, T) (*(T *)((char *)(p) + (o)))

int mp_py_on;
_Atomic int mp_py_waiting;
static const struct py_layout *L;
static char *runtime;
static void *code_type;
static void *(*get_current)(void);      /* 3.12+ */
/* the main interpreter, its thread states, a state's interpreter (C API leaf functions) */
static char *(*interp_main)(void), *(*thread_head)(char *), *(*thread_next)(char *), *(*ts_interp)(char *);
static uintptr_t eval_lo, eval_hi;
static _Atomic uint32_t py_epoch;

/* ------------------------------------------------------------ the walk */

/* The calling thread's PyThreadState: the GIL holder's if it is this
 * thread, else the one the thread keeps in its TSS (C code that released
 * the GIL). */
static inline char *tstate_self(struct mp_pyframes *pf)
{
    char *ts;
    if (L->rt_tstate_current >= 0) {
        if (unlikely(!pf->self)) pf->self = (unsigned long)pthread_self();
        ts = (char *)atomic_load_explicit((_Atomic uintptr_t *)(runtime + L->rt_tstate_current), RELAXED);
        if (ts && AT(ts, L->ts_thread_id, unsigned long) == pf->self) return ts;
    } else if ((ts = get_current())) {
        return ts;
    }
    if (!AT(runtime, L->rt_tss, int)) return NULL;
    return pthread_getspecific(AT(runtime, L->rt_tss + 4, pthread_key_t));
}

static inline int aligned(const void *p) { return p && !((uintptr_t)p & 7); }

/* Appends the frames of the chain from fr to pf->* (at *k on), segment
 * by segment (*seg: the invocation's number, leaf first). */
static void walk_chain(struct mp_pyframes *pf, struct mp_hash *h, char *fr, int *k, int *seg)
{
    for (int hops = 0; aligned(fr) && hops < 4096 && *k < MP_PY_FRAMES; fr = AT(fr, L->fr_previous, char *), hops++) {
        int owner = AT(fr, L->fr_owner, char);
        if (owner == L->owner_cstack) {         /* 3.12+: an invocation's entry shim ends its segment */
            ++*seg;
            hash_add(h, 1);
            continue;
        }
        char *code = AT(fr, L->fr_code, char *);
        if (aligned(code) && AT(code, 8, void *) == code_type) {
            char *start = code + L->co_code, *instr = AT(fr, L->fr_instr, char *);
            /* an incomplete frame (still being set up) is not shown */
            if (owner == OWNED_BY_GENERATOR || instr >= start + 2 * AT(code, L->co_firsttraceable, int)) {
                uint32_t off = (uint32_t)(instr - start);
                pf->code[*k] = (uintptr_t)code;
                pf->off[*k] = off;
                pf->seg[*k] = (uint16_t)*seg;
                hash_add(h, (uintptr_t)code ^ (uint64_t)off << 48);
                ++*k;
            }
        }
        if (L->fr_is_entry >= 0 && AT(fr, L->fr_is_entry, char)) {     /* 3.11: the invocation's first frame */
            ++*seg;
            hash_add(h, 1);
        }
    }
}

/* A thread state's innermost frame. */
static char *current_frame(char *ts)
{
    char *fr = L->ts_cframe >= 0 ? AT(ts, L->ts_cframe, char *) : ts;
    return aligned(fr) ? AT(fr, L->ts_cframe >= 0 ? L->cf_current : L->ts_current, char *) : NULL;
}

/* A sub-interpreter runs (interp_run_string) in a thread state of its
 * own, swapped in by its caller, whose state keeps the caller's frames:
 * this thread's state in the main interpreter (NULL: ts is it, or none).
 * 3.11: the GIL state's TSS (a swap leaves it); 3.12+ (a swap rebinds it):
 * the main interpreter's list. A sub-interpreter run from another shows
 * its own frames and the main interpreter's, not the middle one's. */
static char *caller_state(char *ts)
{
    char *main = interp_main();
    if (!aligned(main) || ts_interp(ts) == main) return NULL;
    if (L->rt_tstate_current >= 0) {
        if (!AT(runtime, L->rt_tss, int)) return NULL;
        char *c = pthread_getspecific(AT(runtime, L->rt_tss + 4, pthread_key_t));
        return c != ts && aligned(c) && ts_interp(c) == main ? c : NULL;
    }
    unsigned long self = (unsigned long)pthread_self();
    int hops = 0;
    for (char *c = thread_head(main); aligned(c) && hops < 1024; c = thread_next(c), hops++)
        if (c != ts && AT(c, L->ts_thread_id, unsigned long) == self) return c;
    return NULL;
}

static int __attribute__((noinline)) walk(struct mp_pyframes *pf, struct mp_hash *h)
{
    /* from the first frame (start-up's imports come before `initialized`)
     * to finalization, which frees the other threads' states */
    if (AT(runtime, L->rt_finalizing, void *)) return 0;
    char *ts = tstate_self(pf);
    if (!aligned(ts)) return 0;
    int k = 0, seg = 0;
    walk_chain(pf, h, current_frame(ts), &k, &seg);
    char *caller = interp_main ? caller_state(ts) : NULL;
    if (caller) {
        if (k && pf->seg[k - 1] == seg) {     /* the caller's frames start an invocation of their own */
            seg++;
            hash_add(h, 1);
        }
        walk_chain(pf, h, current_frame(caller), &k, &seg);
    }
    if (k) hash_add(h, atomic_load_explicit(&py_epoch, RELAXED));
    return pf->n = k;
}

/* The walk under a fault guard (a layout that is not the interpreter's
 * after all, a state freed under the reader): the recorder's fault handler
 * jumps back (signals.c, inside the profiler only), and Python frames are
 * given up for the process. sigsetjmp without the signal mask (no system
 * call on the common path); SIGSEGV and SIGBUS unblocked after a jump. */
int python_walk(struct mp_pyframes *pf, struct mp_hash *h)
{
    sigjmp_buf jb, *outer = mp_recover;
    const struct mp_hash before = *h;
    pf->n = 0;
    if (sigsetjmp(jb, 0)) {
        mp_recover = outer;
        *h = before;
        pf->n = 0;
        sigset_t faults;
        sigemptyset(&faults), sigaddset(&faults, SIGSEGV), sigaddset(&faults, SIGBUS);
        pthread_sigmask(SIG_UNBLOCK, &faults, NULL);
        if (__atomic_exchange_n(&mp_py_on, 0, __ATOMIC_RELAXED))
            mp_log("warning", "Python frames: reading the interpreter's frames faulted: native frames only from now on");
        return 0;
    }
    mp_recover = &jb;
    int k = walk(pf, h);
    mp_recover = outer;
    return k;
}

/* ------------------------------------------------------------ frames */

/* A code object's names, copied (it may die), and frames by id (1..). */
struct py_code { const char *name, *file; };
struct py_frame { const char *name, *file; int line; };
#define CHUNK 4096
static atomic_flag py_lock = ATOMIC_FLAG_INIT;
static struct u64map codes;             /* code address → code serial */
static struct u64map by_offset;         /* serial << 32 | offset → frame id */
static struct u64map by_line;           /* serial << 32 | (line + 1) → frame id */
static struct py_code *code_chunks[PYFRAME_MAX / CHUNK];
static struct py_frame *_Atomic frame_chunks[PYFRAME_MAX / CHUNK];
static uint32_t ncodes;
static _Atomic uint32_t nframes;

/* A str's text as UTF-8, NUL-terminated, into the arena (NULL: no memory
 * or not a compact string). */
static const char *copy_str(const char *u)
{
    if (!aligned(u)) return NULL;
    uint32_t state = AT(u, 32, uint32_t);
    size_t len = AT(u, 16, size_t);
    if (!(state >> 5 & 1) || len > 4096) return NULL;          /* not compact */
    int ascii = state >> 6 & 1, kind = state >> 2 & 7;
    const unsigned char *d = (const unsigned char *)u + (ascii ? L->uni_ascii_size : L->uni_compact_size);
    char *out = arena_alloc(ascii ? len + 1 : len * 4 + 1, 1);
    if (!out) return NULL;
    if (ascii) {
        memcpy(out, d, len);
        return out;
    }
    char *o = out;
    for (size_t i = 0; i < len; i++) {
        uint32_t c = kind == 1 ? d[i] : kind == 2 ? ((const uint16_t *)d)[i] : ((const uint32_t *)d)[i];
        if (c < 0x80) *o++ = (char)c;
        else if (c < 0x800) *o++ = (char)(0xc0 | c >> 6), *o++ = (char)(0x80 | (c & 63));
        else if (c < 0x10000) *o++ = (char)(0xe0 | c >> 12), *o++ = (char)(0x80 | (c >> 6 & 63)), *o++ = (char)(0x80 | (c & 63));
        else *o++ = (char)(0xf0 | c >> 18), *o++ = (char)(0x80 | (c >> 12 & 63)), *o++ = (char)(0x80 | (c >> 6 & 63)),
             *o++ = (char)(0x80 | (c & 63));
    }
    return out;
}

/* The 3.11+ location table (co_linetable, the same format in 3.11-3.13):
 * entries of a first byte 1:code(4):length-1(3), in code units, followed
 * by varints; the line of the code unit at byte offset `off`, -1: none. */
static unsigned varint(const uint8_t **p, const uint8_t *end)
{
    unsigned r = *(*p)++, v = r & 63, s = 0;
    while ((r & 64) && *p < end && s < 24) r = *(*p)++, s += 6, v |= (r & 63) << s;
    return v;
}

static int code_line(const char *code, uint32_t off)
{
    const char *lt = AT(code, L->co_linetable, const char *);
    if (!aligned(lt)) return -1;
    const uint8_t *p = (const uint8_t *)lt + 32, *end = p + AT(lt, 16, long);
    int line = AT(code, L->co_firstlineno, int);
    uint32_t start = 0;
    while (p < end) {
        uint8_t first = *p++;
        int kind = first >> 3 & 15;
        uint32_t stop = start + ((first & 7) + 1) * 2;
        if (kind == 13 || kind == 14) {
            const uint8_t *q = p;
            unsigned u = varint(&q, end);
            line += u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (kind >= 10 && kind <= 12) {
            line += kind - 10;
        }
        if (off < stop) return kind == 15 ? -1 : line;
        start = stop;
        while (p < end && !(*p & 0x80)) p++;
    }
    return -1;
}

/* The serial of a code object (1..), its names copied the first time;
 * 0: no memory. Under py_lock. */
static uint32_t code_serial(const char *code)
{
    uint32_t s = map_get(&codes, (uintptr_t)code);
    if (s || ncodes + 1 >= PYFRAME_MAX) return s;
    s = ncodes + 1;
    struct py_code **chunk = &code_chunks[s / CHUNK];
    if (!*chunk && !(*chunk = arena_alloc(CHUNK * sizeof **chunk, 1))) return 0;
    const char *name = copy_str(AT(code, L->co_qualname, const char *));
    const char *file = copy_str(AT(code, L->co_filename, const char *));
    (*chunk)[s % CHUNK] = (struct py_code){ name ? name : "?", file ? file : "?" };
    if (map_put(&codes, (uintptr_t)code, s)) return 0;
    ncodes = s;
    return s;
}

/* The frame id of (code, offset); 0: no memory. Under py_lock. */
static uint32_t frame_id(const char *code, uint32_t off)
{
    uint32_t s = code_serial(code);
    if (!s) return 0;
    uint64_t okey = (uint64_t)s << 32 | off;
    uint32_t id = map_get(&by_offset, okey);
    if (id) return id;
    int line = code_line(code, off);
    uint64_t lkey = (uint64_t)s << 32 | (uint32_t)(line + 1);
    if (!(id = map_get(&by_line, lkey))) {
        uint32_t n = atomic_load_explicit(&nframes, RELAXED);
        if (n + 1 >= PYFRAME_MAX) return 0;
        id = n + 1;
        struct py_frame *chunk = atomic_load_explicit(&frame_chunks[id / CHUNK], RELAXED);
        if (!chunk) {
            if (!(chunk = arena_alloc(CHUNK * sizeof *chunk, 1))) return 0;
            atomic_store_explicit(&frame_chunks[id / CHUNK], chunk, memory_order_release);
        }
        const struct py_code *c = &code_chunks[s / CHUNK][s % CHUNK];
        chunk[id % CHUNK] = (struct py_frame){ c->name, c->file, line };
        if (map_put(&by_line, lkey, id)) return 0;
        atomic_store_explicit(&nframes, id, memory_order_release);
    }
    map_put(&by_offset, okey, id);
    return id;
}

int python_frame(uintptr_t addr, const char **function, const char **file, int *line)
{
    if (addr <= PYFRAME_BASE || addr >= PYFRAME_BASE + PYFRAME_MAX) return 0;
    uint32_t id = (uint32_t)(addr - PYFRAME_BASE);
    if (id > atomic_load_explicit(&nframes, memory_order_acquire)) return 0;
    const struct py_frame *f = &atomic_load_explicit(&frame_chunks[id / CHUNK], memory_order_acquire)[id % CHUNK];
    *function = f->name, *file = f->file, *line = f->line;
    return 1;
}

/* Appends segment `seg`'s frames (from pf->* at *k on) to out. */
static int put_segment(struct mp_pyframes *pf, int *k, int seg, uintptr_t *out, int m)
{
    for (; *k < pf->n && pf->seg[*k] == seg; (*k)++) {
        uint32_t id = frame_id((const char *)pf->code[*k], pf->off[*k]);
        out[m++] = id ? PYFRAME_BASE + id : ADDR_UNKNOWN;
    }
    return m;
}

static inline int in_eval(uintptr_t a) { return a - eval_lo < eval_hi - eval_lo; }

/* Native evaluation frames take the segments in order, leaf first. When
 * there are more segments than evaluation frames found (an evaluation
 * called through the loop's unnamed .cold part, or the unwinder stopped
 * early), the outermost evaluation frame takes the rest too, so that the
 * Python frames stay in their order under the native frames that started
 * the interpreter; with no evaluation frame at all, they follow the native
 * frames. Extra evaluation frames stay. */
int python_splice(struct mp_pyframes *pf, const uintptr_t *in, int nnative, int n, uintptr_t *out)
{
    int m = 0, k = 0, seg = 0, last = pf->n ? pf->seg[pf->n - 1] : -1, outer = -1;
    for (int i = 0; i < nnative; i++)
        if (in_eval(in[i])) outer = i;
    spin_lock(&py_lock);
    for (int i = 0; i < n; i++) {
        if (i == nnative && outer < 0)
            for (; seg <= last; seg++) m = put_segment(pf, &k, seg, out, m);
        if (i < nnative && in_eval(in[i]) && seg <= last) {
            m = put_segment(pf, &k, seg++, out, m);
            if (i == outer)
                for (; seg <= last; seg++) m = put_segment(pf, &k, seg, out, m);
        } else {
            out[m++] = in[i];
        }
    }
    for (; seg <= last; seg++) m = put_segment(pf, &k, seg, out, m);
    spin_unlock(&py_lock);
    return m;
}

void python_lock(void) { spin_lock(&py_lock); }
void python_unlock(void) { spin_unlock(&py_lock); }

/* ------------------------------------------------------------ code deaths */

typedef void (*destructor_fn)(void *);
static destructor_fn code_dealloc;

static void code_dealloc_hook(void *code)
{
    spin_lock(&py_lock);
    int known = map_get(&codes, (uintptr_t)code) != 0;
    if (known) map_remove(&codes, (uintptr_t)code);
    spin_unlock(&py_lock);
    if (known) atomic_fetch_add_explicit(&py_epoch, 1, RELAXED);
    code_dealloc(code);
}

/* The end of an attach session (python.h): the frames' tables given back
 * (their chunks and names are the arena's); frame ids start from 1 again. */
void python_forget(void)
{
    spin_lock(&py_lock);
    map_free(&codes), map_free(&by_offset), map_free(&by_line);
    for (uint32_t c = 0; c <= ncodes / CHUNK || c <= nframes / CHUNK; c++) code_chunks[c] = NULL, frame_chunks[c] = NULL;
    ncodes = 0, nframes = 0;
    if (code_dealloc) atomic_store((_Atomic(destructor_fn) *)((char *)code_type + 48), code_dealloc);
    spin_unlock(&py_lock);
}

/* A later attach session: the code objects' deaths seen again (a code
 * object interned from now on), pymalloc wrapped again (full capture). */
void python_session_start(void)
{
    if (code_dealloc && mp_py_on)
        atomic_store((_Atomic(destructor_fn) *)((char *)code_type + 48), code_dealloc_hook);
    pymalloc_session_start();
}

/* ------------------------------------------------------------ the GIL */

/* Whether the calling thread holds the GIL. */
static int holds_gil(void)
{
    if (get_current) return get_current() != NULL;
    char *ts = (char *)atomic_load_explicit((_Atomic uintptr_t *)(runtime + L->rt_tstate_current), RELAXED);
    return ts && AT(ts, L->ts_thread_id, unsigned long) == (unsigned long)pthread_self();
}

int python_gil_ready(void)
{
    return AT(runtime, L->rt_initialized, int) && !AT(runtime, L->rt_finalizing, void *) && holds_gil();
}

/* ------------------------------------------------------------ init */

void python_init(int full)
{
    if (!mp_opt.python || !(runtime = dlsym(RTLD_DEFAULT, "_PyRuntime"))) return;
    const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");
    unsigned long minor = version ? *version & 0xffff0000ul : 0;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor) L = &layouts[i];
    if (!L) {
        if (minor) mp_log("warning", "Python frames: CPython %lu.%lu is not supported (3.11, 3.12 and 3.13 are): "
                          "native frames only", minor >> 24, minor >> 16 & 0xff);
        else mp_log("warning", "Python frames: CPython 3.10 or older is not supported (3.11, 3.12 and 3.13 are): "
                    "native frames only");
        return;
    }
    const char *problem = NULL;
    code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    void *type_type = dlsym(RTLD_DEFAULT, "PyType_Type"), *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    get_current = (void *(*)(void))dlsym(RTLD_DEFAULT, "_PyThreadState_GetCurrent");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!code_type || !type_type || !eval || !dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        problem = "its symbols were not found";
    else if (AT(code_type, 8, void *) != type_type)     /* a Py_TRACE_REFS build shifts every field */
        problem = "its objects' layout is not the one known";
    else if (minor == 0x030d0000 && (memcmp(runtime, "xdebugpy", 8) || AT(runtime, 8, unsigned long) >> 16 != *version >> 16))
        problem = "its _Py_DebugOffsets do not match";
    else if (minor == 0x030d0000 && AT(runtime, 16, uint64_t))
        problem = "free-threaded builds are not supported";
    else if (minor >= 0x030c0000 && !get_current)
        problem = "_PyThreadState_GetCurrent was not found";
    if (problem) {
        mp_log("warning", "Python frames: CPython %lu.%lu: %s: native frames only", minor >> 24, minor >> 16 & 0xff,
               problem);
        return;
    }
    interp_main = (char *(*)(void))dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
    thread_head = (char *(*)(char *))dlsym(RTLD_DEFAULT, "PyInterpreterState_ThreadHead");
    thread_next = (char *(*)(char *))dlsym(RTLD_DEFAULT, "PyThreadState_Next");
    ts_interp = (char *(*)(char *))dlsym(RTLD_DEFAULT, "PyThreadState_GetInterpreter");
    if (!thread_head || !thread_next || !ts_interp) interp_main = NULL;   /* sub-interpreters: their own frames only */
    eval_lo = (uintptr_t)eval;
    eval_hi = eval_lo + sym->st_size;
    /* before any code object can die: the hook is one pointer of the static type */
    code_dealloc = AT(code_type, 48, destructor_fn);
    atomic_store_explicit((_Atomic(destructor_fn) *)((char *)code_type + 48), code_dealloc_hook, memory_order_release);
    mp_py_on = 1;
    pymalloc_init(AT(runtime, L->rt_initialized, int), full);
}
