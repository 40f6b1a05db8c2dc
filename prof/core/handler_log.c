/* The signal handlers' log: per thread, the allocations and frees of
 * signal handlers that interrupted the allocator or the profiler, written
 * only by them (MP_IN_HANDLER) and drained by the thread at its way out,
 * where record.c records them. The log never touches the profiler's state;
 * a block it cannot hold is counted (its free will be an unknown one), and
 * a free it cannot hold is kept (a leak is safe, a stale map entry is not). */
#include "hot.h"

#include <stdlib.h>
#include <string.h>

/* Per thread, a log of the allocations and frees of signal handlers that
 * interrupted the allocator or the profiler, written only by them and read
 * by the thread at its way out. It grows with mmap (a system call, safe in
 * a handler): a slow stretch inside the profiler (computing an unwind rule
 * the first time) can see hundreds of signals. */
enum { EV_ALLOC, EV_PAIR, EV_FREE };
struct handler_event { void *p; uint64_t size; int kind; };
static MP_TLS struct {
    struct handler_event *ev;
    uint32_t n, cap;
    uint64_t lost_ncalls, lost_memtot;  /* no room: counted; their frees will be unknown ones */
} hlog;

static struct handler_event *handler_append(void)
{
    if (hlog.n == hlog.cap) {
        uint32_t cap = hlog.cap ? hlog.cap * 2 : 256;
        struct handler_event *ev = mp_map((size_t)cap * sizeof *ev, 0);
        if (!ev) return NULL;
        if (hlog.ev) {
            memcpy(ev, hlog.ev, (size_t)hlog.n * sizeof *ev);
            mp_unmap(hlog.ev, (size_t)hlog.cap * sizeof *ev);
        }
        hlog.ev = ev;
        hlog.cap = cap;
    }
    mp_tls.pending |= PENDING_HANDLER;
    return &hlog.ev[hlog.n++];
}

void handler_alloc(void *p, size_t size)
{
    struct handler_event *e = handler_append();
    if (e) *e = (struct handler_event){ p, size, EV_ALLOC };
    else hlog.lost_ncalls++, hlog.lost_memtot += size;
}

static struct handler_event *handler_block(const void *p)
{
    for (uint32_t i = hlog.n; i-- > 0;)
        if (hlog.ev[i].p == p && hlog.ev[i].kind == EV_ALLOC) return &hlog.ev[i];
    return NULL;
}

int handler_owns(const void *p)
{
    return handler_block(p) != NULL;
}

int handler_free(void *p)
{
    struct handler_event *e = handler_block(p);
    if (e) {
        e->kind = EV_PAIR;      /* allocated and freed by handlers: free it now */
        return 0;
    }
    /* a block the map may hold: freed for real once it is out of the map, so
     * the allocator cannot give its address out again before; with no room
     * left, kept (a leak is safe, a stale map entry is not) */
    e = handler_append();
    if (e) *e = (struct handler_event){ p, 0, EV_FREE };
    return 1;
}

/* At the thread's way out of the profiler (mp_run_pending),
 * signals blocked: the events in order, the blocks without a stack. */
void handler_drain(void)
{
    struct mp_thread *t = thread_self();
    for (uint32_t i = 0; i < hlog.n; i++) {
        struct handler_event *e = &hlog.ev[i];
        MP_ASSERT(e->kind == EV_FREE || e->kind == EV_ALLOC || e->kind == EV_PAIR);
        if (e->kind == EV_FREE) {
            record_free(e->p);
            free(e->p);                 /* marked inside: the real free */
        } else if (t) {
            record_handler_block(t, e->p, e->size, e->kind == EV_PAIR);
        }
    }
    hlog.n = 0;
    if (t && hlog.lost_ncalls) record_handler_lost(t, hlog.lost_ncalls, hlog.lost_memtot);
    hlog.lost_ncalls = hlog.lost_memtot = 0;
    if (t) peak_op_end(t);
}
