/* test_cron.c - cron expressions (base/cron.c) and the zone table
 * (base/tzfile.c): parsing, rejection, and next times on a fixed clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cron.h"
#include "base/timeutil.h"
#include "base/tzfile.h"

static cron_spec parse_ok(const char *expr)
{
    cron_spec s;
    ty_error err;

    ty_error_init(&err);
    if (cron_parse(expr, &s, &err) != 0)
        fail_msg("cron_parse(\"%s\"): %s", expr, err.text);
    ty_error_clear(&err);
    return s;
}

static void parse_bad(const char *expr)
{
    cron_spec s = {.minute = 77};
    ty_error err;

    ty_error_init(&err);
    if (cron_parse(expr, &s, &err) != -1)
        fail_msg("cron_parse(\"%s\") accepted", expr);
    assert_int_equal(err.code, TY_EINVALID);
    assert_true(strlen(err.text) > 0);
    assert_int_equal(s.minute, 77); /* untouched */
    ty_error_clear(&err);
}

static int64_t at(const char *rfc3339)
{
    time_t t;
    if (ty_time_parse(rfc3339, &t) != 0)
        fail_msg("bad time %s", rfc3339);
    return (int64_t)t;
}

/* The next time of expr after `after` in zone z, as RFC 3339 UTC. */
static const char *next_str(const char *expr, const tz_zone *z, const char *after)
{
    static char buf[64];
    cron_spec s = parse_ok(expr);
    int64_t n = cron_next(&s, z, at(after));

    if (n == 0)
        return "none";
    ty_time_format((time_t)n, buf, sizeof(buf));
    return buf;
}

static void test_fields(void **state)
{
    (void)state;
    cron_spec s = parse_ok("*/1 * * * *");
    assert_true(s.minute == (((uint64_t)1 << 60) - 1));
    assert_int_equal(s.hour, (1u << 24) - 1);
    assert_true(s.dom_star && s.dow_star);
    assert_int_equal(s.every, 0);

    s = parse_ok("5/20 0-6/2 1,15 jan,JUL ?");
    assert_true(s.minute == ((uint64_t)1 << 5 | (uint64_t)1 << 25 | (uint64_t)1 << 45));
    assert_int_equal(s.hour, 1u | 1u << 2 | 1u << 4 | 1u << 6);
    assert_int_equal(s.dom, 1u << 1 | 1u << 15);
    assert_int_equal(s.month, 1u << 1 | 1u << 7);
    assert_false(s.dom_star);
    assert_true(s.dow_star);

    s = parse_ok("0 9 * * MON-FRI");
    assert_int_equal(s.dow, 0x3eu);
    s = parse_ok("0 0 */2 * *"); /* a step above 1 restricts the field */
    assert_false(s.dom_star);
    s = parse_ok("  0  0\t1 1 *  ");
    assert_int_equal(s.month, 2u);
}

static void test_descriptors(void **state)
{
    (void)state;
    cron_spec s = parse_ok("@daily"), d = parse_ok("0 0 * * *");
    assert_memory_equal(&s, &d, sizeof(s));
    s = parse_ok("@hourly");
    assert_true(s.minute == 1);
    s = parse_ok("@weekly");
    assert_int_equal(s.dow, 1u);
    assert_int_equal(parse_ok("@every 1h30m").every, 5400);
    assert_int_equal(parse_ok("@every 90s").every, 90);
    assert_int_equal(parse_ok("@every 500ms").every, 1);
    parse_ok("@yearly");
    parse_ok("@annually");
    parse_ok("@monthly");
    parse_ok("@midnight");
}

static void test_bad(void **state)
{
    (void)state;
    const char *bad[] = {"", "   ", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *",
                         "* * 0 * *", "* * 32 * *", "* * * 13 *", "* * * 0 *", "* * * * 7",
                         "*/0 * * * *", "1-2-3 * * * *", "5-1 * * * *", "a * * * *",
                         ",1 * * * *", "1, * * * *", "1,,2 * * * *", "*/ * * * *",
                         "1/2/3 * * * *", "- * * * *", "-1 * * * *", "* * * foo *",
                         "@foo", "@every", "@every x", "@every 1h 2m", "@daily now",
                         "99999 * * * *", "*/99999 * * * *", "TZ=UTC * * * * *", NULL};
    for (size_t i = 0; bad[i]; i++)
        parse_bad(bad[i]);
    char big[CRON_MAX_LEN + 8];
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    parse_bad(big);
}

static void test_next_utc(void **state)
{
    (void)state;
    assert_string_equal(next_str("*/1 * * * *", NULL, "2026-11-28T04:30:10Z"),
                        "2026-11-28T04:31:00Z");
    /* Strictly after: a time on the minute gives the next one. */
    assert_string_equal(next_str("* * * * *", NULL, "2026-11-28T04:31:00Z"),
                        "2026-11-28T04:32:00Z");
    assert_string_equal(next_str("*/5 * * * *", NULL, "2026-11-28T04:31:00Z"),
                        "2026-11-28T04:35:00Z");
    assert_string_equal(next_str("0 0 1 1 *", NULL, "2026-11-28T04:31:00Z"),
                        "2027-01-01T00:00:00Z");
    assert_string_equal(next_str("0 0 29 2 *", NULL, "2026-03-01T00:00:00Z"),
                        "2028-02-29T00:00:00Z");
    assert_string_equal(next_str("0 0 30 2 *", NULL, "2026-03-01T00:00:00Z"), "none");
    assert_string_equal(next_str("59 23 31 12 *", NULL, "2026-12-31T23:59:00Z"),
                        "2027-12-31T23:59:00Z");
    /* 2026-11-28 is a Saturday. Both day fields restricted: either. */
    assert_string_equal(next_str("0 0 13 * 5", NULL, "2026-11-28T04:31:00Z"),
                        "2026-12-04T00:00:00Z");
    assert_string_equal(next_str("0 0 13 * *", NULL, "2026-11-28T04:31:00Z"),
                        "2026-12-13T00:00:00Z");
    assert_string_equal(next_str("0 0 1-31 * 5", NULL, "2026-11-28T04:31:00Z"),
                        "2026-11-29T00:00:00Z");
    /* A `*`/1 day of month is a star: both must match, so Fridays only. */
    assert_string_equal(next_str("0 0 */1 * 5", NULL, "2026-11-28T04:31:00Z"),
                        "2026-12-04T00:00:00Z");
    assert_string_equal(next_str("@every 90s", NULL, "2026-11-28T04:31:00Z"),
                        "2026-11-28T04:32:30Z");
    assert_string_equal(next_str("@hourly", NULL, "2026-11-28T23:59:59Z"),
                        "2026-11-29T00:00:00Z");
}

static tz_zone *zone(const char *name)
{
    ty_error err;
    tz_zone *z;

    ty_error_init(&err);
    z = tz_load(NULL, name, &err);
    ty_error_clear(&err);
    return z;
}

static void test_next_in_zones(void **state)
{
    (void)state;
    tz_zone *ny = zone("America/New_York"), *berlin = zone("Europe/Berlin");
    tz_zone *kolkata = zone("Asia/Kolkata");

    if (!ny || !berlin || !kolkata) {
        tz_free(ny), tz_free(berlin), tz_free(kolkata);
        skip(); /* no tzdata on this machine */
    }
    assert_int_equal(tz_offset(ny, at("2026-07-01T00:00:00Z")), -4 * 3600);
    assert_int_equal(tz_offset(ny, at("2026-12-01T00:00:00Z")), -5 * 3600);
    assert_string_equal(next_str("0 9 * * *", NULL, "2026-11-28T04:30:00Z"),
                        "2026-11-28T09:00:00Z");
    cron_spec s = parse_ok("0 9 * * *");
    char buf[64];
    ty_time_format((time_t)cron_next(&s, berlin, at("2026-11-28T04:30:00Z")), buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-28T08:00:00Z");
    s = parse_ok("0 12 * * *");
    ty_time_format((time_t)cron_next(&s, kolkata, at("2026-11-28T04:30:00Z")), buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-28T06:30:00Z");

    /* New York springs forward on 2026-03-08 at 02:00 EST: 02:30 does not
     * happen that day. */
    s = parse_ok("30 2 * * *");
    ty_time_format((time_t)cron_next(&s, ny, at("2026-03-07T12:00:00Z")), buf, sizeof(buf));
    assert_string_equal(buf, "2026-03-09T06:30:00Z");
    /* 03:30 does, an hour after 01:30 EST. */
    s = parse_ok("30 3 * * *");
    ty_time_format((time_t)cron_next(&s, ny, at("2026-03-08T06:00:00Z")), buf, sizeof(buf));
    assert_string_equal(buf, "2026-03-08T07:30:00Z");
    /* It falls back on 2026-11-01 at 02:00 EDT: 01:30 happens twice. */
    s = parse_ok("30 1 * * *");
    int64_t t = cron_next(&s, ny, at("2026-10-31T12:00:00Z"));
    ty_time_format((time_t)t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-01T05:30:00Z");
    t = cron_next(&s, ny, t);
    ty_time_format((time_t)t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-01T06:30:00Z");
    t = cron_next(&s, ny, t);
    ty_time_format((time_t)t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-02T06:30:00Z");
    /* Months in local time: midnight of the 1st in New York. */
    s = parse_ok("@monthly");
    ty_time_format((time_t)cron_next(&s, ny, at("2026-11-28T04:30:00Z")), buf, sizeof(buf));
    assert_string_equal(buf, "2026-12-01T05:00:00Z");
    tz_free(ny);
    tz_free(berlin);
    tz_free(kolkata);
}

static void test_zone_names(void **state)
{
    (void)state;
    const char *bad[] = {"", "/etc/localtime", "../etc/passwd", "America/../../etc/passwd",
                         "./UTC", "America//New_York", "America/", "No/Such_Zone", "a b",
                         NULL};
    ty_error err;

    for (size_t i = 0; bad[i]; i++) {
        ty_error_init(&err);
        tz_zone *z = tz_load(NULL, bad[i], &err);
        if (z)
            fail_msg("tz_load(\"%s\") accepted", bad[i]);
        assert_int_equal(err.code, TY_EINVALID);
        ty_error_clear(&err);
    }
    /* A file that is there but not a zone. */
    char dir[] = "/tmp/test_cron.XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/Fake", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("TZif2 but not really", f);
    fclose(f);
    ty_error_init(&err);
    assert_null(tz_load(dir, "Fake", &err));
    assert_int_equal(err.code, TY_EINVALID);
    ty_error_clear(&err);
    unlink(path);
    rmdir(dir);
    /* The local zone always loads (UTC without /etc/localtime). */
    tz_zone *local = tz_load(NULL, NULL, NULL);
    assert_non_null(local);
    tz_free(local);
}

/* Every prefix of a real zone file is refused or read without overrun
 * (ASan watches). */
static void test_truncated_files(void **state)
{
    (void)state;
    FILE *f = fopen("/usr/share/zoneinfo/Europe/Berlin", "rb");
    unsigned char buf[8192];
    size_t len;

    if (!f)
        skip();
    len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    for (size_t n = 0; n < len; n++) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        tz_zone *z = tz_parse(copy, n, NULL);
        tz_free(z);
        free(copy);
    }
    tz_zone *z = tz_parse(buf, len, NULL);
    assert_non_null(z);
    assert_int_equal(tz_offset(z, at("2026-07-01T00:00:00Z")), 7200);
    tz_free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_descriptors),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_next_utc),
        cmocka_unit_test(test_next_in_zones),
        cmocka_unit_test(test_zone_names),
        cmocka_unit_test(test_truncated_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
