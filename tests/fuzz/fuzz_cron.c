/* fuzz_cron.c - cron expressions (base/cron.c) and TZif files
 * (base/tzfile.c). An input starting "TZif" is read as a zone file: a
 * failure has an error, offsets stay within a day. Anything else is a cron
 * expression: a failure has an error; a schedule's next time after a few
 * fixed instants, in UTC and in the zone of the machine's New York file
 * (when there is one), is later than the instant, matches the schedule in
 * that zone, and no minute in between does (checked when it is less than
 * two days away). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cron.h"
#include "base/tzfile.h"
#include "fuzz.h"

static bool matches(const cron_spec *s, const tz_zone *z, int64_t u)
{
    time_t local = (time_t)(u + tz_offset(z, u));
    struct tm tm;
    bool dom, dow;

    if (!gmtime_r(&local, &tm))
        return false;
    dom = s->dom >> tm.tm_mday & 1;
    dow = s->dow >> tm.tm_wday & 1;
    return (s->minute >> tm.tm_min & 1) && (s->hour >> tm.tm_hour & 1) &&
           (s->month >> (tm.tm_mon + 1) & 1) &&
           ((s->dom_star || s->dow_star) ? dom && dow : dom || dow);
}

static void check_next(const cron_spec *s, const tz_zone *z, int64_t t)
{
    int64_t n = cron_next(s, z, t);

    if (n == 0)
        return;
    if (n <= t)
        fuzz_fail("next %lld is not after %lld", (long long)n, (long long)t);
    if (s->every) {
        if (n != t + s->every)
            fuzz_fail("@every %lld from %lld gave %lld", (long long)s->every, (long long)t,
                      (long long)n);
        return;
    }
    if (!matches(s, z, n))
        fuzz_fail("next %lld after %lld does not match", (long long)n, (long long)t);
    /* Every UTC minute in between (the zones here are whole minutes). */
    if (n - t < 2 * 86400)
        for (int64_t u = (t / 60 + 1) * 60; u < n; u += 60)
            if (matches(s, z, u))
                fuzz_fail("%lld matches, before next %lld (after %lld)", (long long)u,
                          (long long)n, (long long)t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tz_zone *ny;
    static bool loaded;
    static const int64_t instants[] = {0, 1772953200 /* 2026-03-08 07:00Z: New York springs */,
                                       1793509200 /* 2026-11-01 05:00Z: and falls back */,
                                       1764304270, 4102444799 /* 2099-12-31 */};
    ty_error err;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    if (!loaded) {
        ny = tz_load(NULL, "America/New_York", NULL);
        loaded = true;
    }
    ty_error_init(&err);
    if (size >= 4 && memcmp(data, "TZif", 4) == 0) {
        tz_zone *z = tz_parse(data, size, &err);
        if (!z && err.code == TY_OK)
            fuzz_fail("tz_parse failed without an error");
        for (size_t i = 0; z && i < sizeof(instants) / sizeof(instants[0]); i++) {
            int32_t off = tz_offset(z, instants[i]);
            if (off <= -89999 || off >= 93600)
                fuzz_fail("offset %d", off);
        }
        tz_free(z);
        ty_error_clear(&err);
        return 0;
    }
    char *s = fuzz_cstring(data, size, CRON_MAX_LEN + 16);
    cron_spec spec;
    if (!s)
        return 0;
    if (cron_parse(s, &spec, &err) < 0) {
        if (err.code == TY_OK || !err.text[0])
            fuzz_fail("cron_parse failed without an error");
    } else {
        for (size_t i = 0; i < sizeof(instants) / sizeof(instants[0]); i++) {
            check_next(&spec, NULL, instants[i]);
            if (ny)
                check_next(&spec, ny, instants[i]);
        }
    }
    ty_error_clear(&err);
    free(s);
    return 0;
}
