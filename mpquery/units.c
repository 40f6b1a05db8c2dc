/* Counter values for people: bytes in powers of 1024 (1.21 MiB), time in
 * powers of 1000 (3.40 ms), counts with k, M, G, T (12.3k). Invariant:
 * at most three significant digits once scaled, and a value below the
 * first step is written whole (1000 B, 999, 532 ns), so a small value is
 * never rounded. The counters' names are here too. */
#include "mpquery.h"
#include "counters.h"
#include "output.h"

#include <string.h>

const char *const counter_name[NSTACK_COUNTERS] = { "ncalls", "memtot", "nfree", "nlive", "memlive",
                                                      "maxlive", "ntemp", "time", "nmap", "mapped",
                                                      "maxmapped", "rss", "memcold", "coldage" };

int counter_parse(const char *name)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++)
        if (!strcmp(name, counter_name[i])) return i;
    return -1;
}

static int is_bytes(int counter)
{
    static const counter_set bytes = COUNTER_BIT(MEMTOT) | COUNTER_BIT(MEMLIVE) | COUNTER_BIT(MAXLIVE) |
                                     COUNTER_BIT(MAPPED) | COUNTER_BIT(MAXMAPPED) | COUNTER_BIT(RSS) |
                                     COUNTER_BIT(MEMCOLD);
    return counter >= 0 && counter < NSTACK_COUNTERS && (bytes & COUNTER_BIT(counter));
}

int counter_has_unit(int counter) { return is_bytes(counter) || counter == TIME; }

char *fmt_human(int counter, int64_t v, char *buf, size_t n)
{
    static const char *const bytes[] = { " B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB" };
    static const char *const times[] = { " ns", " \xc2\xb5s", " ms", " s" };
    static const char *const counts[] = { "", "k", "M", "G", "T", "P", "E" };
    const char *const *unit = counts;
    size_t nunits = sizeof counts / sizeof *counts;
    double base = 1000;
    if (is_bytes(counter)) unit = bytes, nunits = sizeof bytes / sizeof *bytes, base = 1024;
    else if (counter == TIME) unit = times, nunits = sizeof times / sizeof *times;
    const char *sign = v < 0 ? "-" : "";
    uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;
    if (a < base) {
        snprintf(buf, n, "%s%llu%s", sign, (unsigned long long)a, unit[0]);
        return buf;
    }
    double x = (double)a;
    size_t k = 0;
    while (x >= base && k + 1 < nunits) x /= base, k++;
    int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
    snprintf(buf, n, "%s%.*f%s", sign, decimals, x, unit[k]);
    return buf;
}

char *fmt_size(int human, int64_t v, char *buf, size_t n)
{
    if (human) return fmt_human(MEMTOT, v, buf, n);
    snprintf(buf, n, "%lld bytes", (long long)v);
    return buf;
}
