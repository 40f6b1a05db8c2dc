/* The cfi walker's previous walk (unwind.c, the only file that includes
 * this): its entries kept right-aligned in the thread, checked and reused
 * by the next walk, filled, spliced and saved. Static functions, in the
 * walker's one translation unit as before (inlined where they were); moved
 * from unwind.c verbatim. */
#ifndef MP_UNWIND_WALK_H
#define MP_UNWIND_WALK_H

/* The previous walk. A walk reads each frame's return address from a
 * slot of the stack; the next slot follows from this one, the return
 * address and its rule, and from rbp where a rule's CFA is based on it
 * (code with frame pointers, functions with alloca or aligned locals): rbp
 * as the walk got there, or as restored from a slot an inner frame saved
 * it in. So once a walk finds a return address in the slot where the
 * previous walk found it (and, if the walk from there on used rbp's value
 * there, the same rbp), the walk outward would read the same slots, and
 * find the previous walk's frames if each slot still holds what the
 * previous walk read there: its return address, or the rbp it restored.
 * Exactly, no heuristic: a frame that returned and a new call that put
 * the same return address in the same slot under other callers shows in
 * the callers' slots. The check is an independent load or two per outer
 * frame, without rules; the frames are then copied and their hash joined
 * from the sum kept for them (hash_join). A deep, stable stack, such as an
 * interpreter's loop or a compiler's recursive descent under a leaf that
 * changes, costs a few frames' walk. A walk that ended on a zero return
 * address keeps that slot as a last entry whose value must still be 0. */

/* The previous walk is kept right-aligned: its outermost entry at
 * WALK_END - 1 and its leaf at WALK_END - walk_n, so that a walk which
 * takes the outer frames from entry i on writes its own frames just below
 * i, and nothing kept moves. Entry WALK_END is the sentinel under a walk
 * that ended by its rule (sum 0, pow 1, no slot), the one walk_fill builds
 * on; a walk that ended on a zero return address has its zero slot there
 * instead, at WALK_END - 1. */
#define WALK_END (MP_WALK_CACHE + 1)

/* The frames of the previous walk from entry i on, if they are all still
 * in place: appended to buf (at most max in all) and hashed. Returns the
 * new n, or -1 with *changed the first entry no longer in place (the
 * frames outside it may be again). */
static int walk_reuse(struct mp_walker *wk, unsigned i, uintptr_t *buf, int n, int max, int *more,
                      struct mp_hash *h, unsigned *changed)
{
    if (!(wk->walk[i].at & 2)) {     /* no rbp slot to check from here on: return addresses alone */
        for (unsigned m = i + 1; m < WALK_END; m++)
            if (*(const uintptr_t *)(wk->walk[m].at & ~(uintptr_t)7) != wk->walk_ra[m]) return *changed = m, -1;
    } else {
        for (unsigned m = i + 1; m < WALK_END; m++) {
            const struct walk_entry *e = &wk->walk[m];
            if (*(const uintptr_t *)(e->at & ~(uintptr_t)7) != wk->walk_ra[m] ||
                (e[-1].rbp_at && *(const uintptr_t *)e[-1].rbp_at != e->rbp))
                return *changed = m, -1;
        }
    }
    int count = (int)(WALK_END - i - wk->walk_z);
    if (unlikely(count > max - n)) {     /* cut at max: hashed frame by frame */
        *more = 1;
        for (; n < max; n++, i++) {
            buf[n] = wk->walk_ra[i];
            hash_add(h, buf[n]);
        }
        return n;
    }
    memcpy(buf + n, wk->walk_ra + i, (size_t)count * sizeof *buf);
    hash_join(h, wk->walk[i].sum, wk->walk[i].pow);
    return n + count;
}

/* Entries lo..lo + n - 1 of the previous walk from the walk under way's
 * first n frames (buf), outward, on top of entry lo + n (set). */
static void walk_fill(struct mp_walker *wk, const uintptr_t *buf, unsigned lo, int n, const struct walk_tail *tail)
{
    struct walk_entry *w = wk->walk + lo;
    uintptr_t *ra = wk->walk_ra + lo;
    uintptr_t used = w[n].at & 1;      /* the walk outside used rbp's value there */
    uintptr_t slots = w[n].at & 2;     /* it checks a slot rbp was restored from */
    uint64_t sum = w[n].sum, pow = w[n].pow;
    for (int k = n - 1; k >= 0; k--) {
        const unsigned kind = tail->kind[k];
        uintptr_t rbp_at = (kind & 2) && used ? tail->rbp_at[k] : 0;   /* restored from a slot, then used */
        used = (kind & 1) || (!(kind & 6) && used);     /* CFA from rbp, or rbp passed through to a use */
        sum = tail->mixed[k] + sum * MP_HASH_K;
        pow *= MP_HASH_K;
        slots |= rbp_at ? 2 : 0;
        w[k] = (struct walk_entry){ tail->at[k] | used | slots, sum, pow, tail->rbp[k], rbp_at };
        ra[k] = buf[k];
    }
}

/* A walk of n frames that found the previous walk's from entry i on: its
 * frames take the places below i. */
static void walk_splice(struct mp_walker *wk, const uintptr_t *buf, int n, const struct walk_tail *tail, unsigned i)
{
    if ((unsigned)n > i) {      /* no room left below */
        wk->walk_n = 0;
        return;
    }
    walk_fill(wk, buf, i - (unsigned)n, n, tail);
    wk->walk_n = WALK_END - i + (unsigned)n;
}

/* After a whole walk of n frames (zero_at: the slot that held 0, or 0 if
 * the last rule ended the stack): it becomes the previous walk. */
static void walk_save(struct mp_walker *wk, const uintptr_t *buf, int n, const struct walk_tail *tail, uintptr_t zero_at)
{
    const unsigned z = zero_at != 0;
    if ((unsigned)n + z > MP_WALK_CACHE) {
        wk->walk_n = 0;
        return;
    }
    /* the entry past the last frame: the zero slot, or the sentinel */
    const unsigned top = WALK_END - z;
    wk->walk[top] = (struct walk_entry){ zero_at, 0, 1, 0, 0 };
    wk->walk_ra[top] = 0;
    walk_fill(wk, buf, top - (unsigned)n, n, tail);
    wk->walk_z = z;
    wk->walk_n = (uint32_t)n + z;
}

#endif
