/* mpquery's units (units.c: fmt_human, counter_has_unit), as text shows
 * values with --human: bytes in powers of 1024 (B, KiB, MiB ... EiB), time
 * in powers of 1000 up to seconds (ns, µs, ms, s), counts with k, M ... E;
 * whole below the first step, then 2, 1 or 0 decimals (three significant
 * digits), negative values with '-', INT64_MIN included. */
#include "mpquery.h"
#include "output.h"
#include "check.h"

/* fmt_human(counter, v) must be text */
struct human_case { int counter; int64_t v; const char *text; };

static void check_cases(const struct human_case *c, size_t n)
{
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        CHECK(fmt_human(c[i].counter, c[i].v, buf, sizeof buf) == buf);
        if (strcmp(buf, c[i].text) != 0) {
            fprintf(stderr, "check failed: fmt_human(counter %d, %lld) = [%s], expected [%s]\n",
                    c[i].counter, (long long)c[i].v, buf, c[i].text);
            exit(1);
        }
    }
}

static void test_human(void)
{
    static const struct human_case cases[] = {
        /* bytes, powers of 1024 */
        { MEMTOT, 0, "0 B" },
        { MEMTOT, 1000, "1000 B" },
        { MEMTOT, 1023, "1023 B" },
        { MEMTOT, 1024, "1.00 KiB" },
        { MEMTOT, 1536, "1.50 KiB" },
        { MEMTOT, 10229, "9.99 KiB" },
        { MEMTOT, 10235, "10.0 KiB" },          /* 9.995 KiB: one decimal */
        { MEMTOT, 102400, "100 KiB" },
        { MEMTOT, 1047552, "1023 KiB" },
        { MEMLIVE, 1048576, "1.00 MiB" },
        { MEMLIVE, 1268777, "1.21 MiB" },
        { MAXLIVE, 5LL << 30, "5.00 GiB" },
        { MAXLIVE, 3LL << 40, "3.00 TiB" },
        { MAXLIVE, 1LL << 50, "1.00 PiB" },
        { MAXLIVE, INT64_MAX, "8.00 EiB" },
        { MEMTOT, -2048, "-2.00 KiB" },
        { MEMTOT, -1, "-1 B" },
        { MEMTOT, INT64_MIN, "-8.00 EiB" },
        /* time (ns), powers of 1000 up to seconds */
        { TIME, 999, "999 ns" },
        { TIME, 1000, "1.00 \xc2\xb5s" },
        { TIME, 3400000, "3.40 ms" },
        { TIME, 5000000000LL, "5.00 s" },
        { TIME, 1000000000000LL, "1000 s" },    /* seconds are the last unit */
        { TIME, -1500, "-1.50 \xc2\xb5s" },
        /* counts, powers of 1000 */
        { NCALLS, 0, "0" },
        { NCALLS, 999, "999" },
        { NCALLS, 1000, "1.00k" },
        { NFREE, 12345, "12.3k" },
        { NLIVE, 45600000, "45.6M" },
        { NTEMP, 999999, "1000k" },             /* rounded up, not carried to 1.00M */
        { NCALLS, 2000000000000LL, "2.00T" },
        { NCALLS, INT64_MAX, "9.22E" },
        { NCALLS, -1234, "-1.23k" },
    };
    check_cases(cases, sizeof cases / sizeof *cases);
    OK("bytes: 1023 B, 1.00 KiB, 10.0 KiB, 100 KiB, 1.21 MiB ... 8.00 EiB, -2.00 KiB");
    OK("time: 999 ns, 1.00 µs, 3.40 ms, 5.00 s, 1000 s (no minutes)");
    OK("counts: 999, 1.00k, 12.3k, 45.6M, 1000k, 2.00T, 9.22E, -1.23k");
}

static void test_small_buffer(void)
{
    char small[5];
    CHECK(fmt_human(MEMTOT, 1536, small, sizeof small) == small);
    CHECK_STR(small, "1.50");       /* cut to the buffer, NUL-terminated */
    OK("a short buffer: the text cut, NUL-terminated, the buffer returned");
}

static void test_has_unit(void)
{
    static const int with[] = { MEMTOT, MEMLIVE, MAXLIVE, TIME, MAPPED, MAXMAPPED, RSS, MEMCOLD };
    static const int without[] = { NCALLS, NFREE, NLIVE, NTEMP, NMAP, COLDAGE };
    for (size_t i = 0; i < sizeof with / sizeof *with; i++) CHECK_EQ(counter_has_unit(with[i]), 1);
    for (size_t i = 0; i < sizeof without / sizeof *without; i++) CHECK_EQ(counter_has_unit(without[i]), 0);
    char buf[64];
    CHECK_STR(fmt_human(MAPPED, 67108864, buf, sizeof buf), "64.0 MiB");
    CHECK_STR(fmt_human(COLDAGE, 3, buf, sizeof buf), "3");
    OK("counter_has_unit: memtot, memlive, maxlive, time, mapped, maxmapped, rss, memcold; not ncalls, nfree, "
       "nlive, ntemp, nmap, coldage");
}

/* Counters combine by sum, coldage (an age) by max; names parse back. */
static void test_combine(void)
{
    counters a = { { 0 } }, b = { { 0 } };
    a.v[MAPPED] = 100, b.v[MAPPED] = 50, a.v[COLDAGE] = 3, b.v[COLDAGE] = 1, a.v[NCALLS] = INT64_MAX, b.v[NCALLS] = 1;
    counters_add(&a, &b);
    CHECK_EQ(a.v[MAPPED], 150);
    CHECK_EQ(a.v[COLDAGE], 3);
    CHECK_EQ(a.v[NCALLS], INT64_MAX);
    CHECK_EQ(counter_combine(COLDAGE, 2, 7), 7);
    for (int k = 0; k < NSTACK_COUNTERS; k++) CHECK_EQ(counter_parse(counter_name[k]), k);
    CHECK_EQ(counter_parse("cold"), -1);
    OK("counters_add: mapped summed, coldage the larger, sums saturate; every name parses to its counter");
}

int main(void)
{
    test_human();
    test_small_buffer();
    test_has_unit();
    test_combine();
    return 0;
}
