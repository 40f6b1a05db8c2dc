/* mpquery live's keys (live.h): c / C the next / previous counter, s / S
 * an earlier / later snapshot (arrows too), / a filter regex typed on the
 * help line (checked as --filter is), q quit. Each changes struct live
 * only; the screen's loop draws again. */
#include "mpquery.h"
#include "profile.h"
#include "live.h"
#include "rules.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The next counter of the heap's that the profile has (dir +1 or -1). */
static void next_counter(struct live *v, int dir)
{
    int k[NSTACK_COUNTERS];
    int n = counter_list(v->counters ? v->counters : COUNTER_BIT(TIME) - 1, k), at = 0;
    for (int i = 0; i < n; i++) if (k[i] == v->c->out.by) at = i;
    v->c->out.by = k[(at + dir + n) % n];
}

/* A key: 1 when the frame must be drawn again, -1 to quit. */
static int key(struct live *v, const char *buf, size_t n)
{
    if (v->typing) {
        size_t len = strlen(v->typing);
        for (size_t i = 0; i < n; i++) {
            char ch = buf[i];
            if (ch == '\r' || ch == '\n') {
                regex_t re;
                const char *refused = *v->typing ? rules_regex_refused(v->typing) : NULL;
                if (refused) {
                    snprintf(v->status, sizeof v->status, "%s '%s'", refused, v->typing);
                } else if (*v->typing && regcomp(&re, v->typing, REG_EXTENDED | REG_NOSUB) != 0) {
                    snprintf(v->status, sizeof v->status, "bad filter regex '%s'", v->typing);
                } else {
                    if (*v->typing) regfree(&re);
                    snprintf(v->filter, sizeof v->filter, "%s", v->typing);
                    v->status[0] = 0;
                }
                free(v->typing), v->typing = NULL;
                return 1;
            }
            if (ch == 27) { free(v->typing), v->typing = NULL; return 1; }
            if ((ch == 127 || ch == 8) && len) v->typing[--len] = 0;
            else if ((unsigned char)ch >= 32 && ch != 127 && len + 1 < sizeof v->filter) {
                v->typing = xrealloc(v->typing, len + 2);
                v->typing[len++] = ch, v->typing[len] = 0;
            }
        }
        return 1;
    }
    if (n >= 3 && buf[0] == 27 && buf[1] == '[') {         /* arrows: left/down earlier, right/up later */
        if (buf[2] == 'D' || buf[2] == 'B') return key(v, "s", 1);
        if (buf[2] == 'C' || buf[2] == 'A') return key(v, "S", 1);
        return 0;
    }
    switch (buf[0]) {
    case 'q': case 'Q': return -1;
    case 'c': next_counter(v, 1); return 1;
    case 'C': next_counter(v, -1); return 1;
    case 's':
        if (v->fixed_snapshot) return 0;
        if (v->seq > 1) v->follow = 0, v->seq--;
        return 1;
    case 'S':
        if (v->fixed_snapshot) return 0;
        if (!v->follow && v->seq + 1 >= v->max_seq) v->follow = 1;
        else if (!v->follow) v->seq++;
        return 1;
    case '/': v->typing = xstrdup(""); return 1;
    }
    return 0;
}

/* The keys typed, one at a time (an arrow is 3 bytes): -1 to quit (q, or
 * the end of stdin), 1 to draw again, else 0. */
int live_keys_read(struct live *v)
{
    char buf[64];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) return -1;
    int k = 0;
    for (ssize_t i = 0; i < n && k >= 0;) {
        size_t len = buf[i] == 27 && i + 2 < n && buf[i + 1] == '[' ? 3 : 1;
        int r = key(v, buf + i, len);
        k = r < 0 ? r : k | r;
        i += (ssize_t)len;
    }
    return k;
}
