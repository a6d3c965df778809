/* test_timeutil.c - base/timeutil's RFC 3339: what it writes (seconds,
 * fractions, offsets, small buffers) and what it reads (fractions, offsets,
 * the edges of every field), with no help from the C library's zone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/timeutil.h"

/* 2026-11-21T23:38:50Z */
#define T0 ((time_t)1795304330)

static void test_format(void **state)
{
    char buf[TY_TIME_FRAC_LEN];

    (void)state;
    ty_time_format(T0, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50Z");
    ty_time_format(0, buf, sizeof(buf));
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    ty_time_format(-1, buf, sizeof(buf));
    assert_string_equal(buf, "1969-12-31T23:59:59Z");
    /* exactly enough room, and one byte short: "" rather than a cut time */
    ty_time_format(T0, buf, TY_TIME_LEN);
    assert_string_equal(buf, "2026-11-21T23:38:50Z");
    ty_time_format(T0, buf, TY_TIME_LEN - 1);
    assert_string_equal(buf, "");
    ty_time_format(T0, buf, 0); /* writes nothing at all */
}

static void test_format_frac(void **state)
{
    char buf[TY_TIME_FRAC_LEN];
    struct timespec ts = {T0, 123456789};

    (void)state;
    ty_time_format_frac(ts, 6, buf, sizeof(buf)); /* MicroTime */
    assert_string_equal(buf, "2026-11-21T23:38:50.123456Z");
    ty_time_format_frac(ts, 9, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50.123456789Z");
    ty_time_format_frac(ts, 3, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50.123Z");
    ty_time_format_frac(ts, 0, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50Z");
    ty_time_format_frac(ts, 12, buf, sizeof(buf)); /* clamped */
    assert_string_equal(buf, "2026-11-21T23:38:50.123456789Z");
    /* leading zeros of the fraction are kept, trailing ones written */
    ts.tv_nsec = 1000;
    ty_time_format_frac(ts, 6, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50.000001Z");
    ts.tv_nsec = 0;
    ty_time_format_frac(ts, 9, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50.000000000Z");
    ty_time_format_frac(ts, 6, buf, 27); /* one short of the 6 digits */
    assert_string_equal(buf, "");
    ty_time_now_frac(6, buf, sizeof(buf));
    assert_int_equal(strlen(buf), 27);
    ty_time_now(buf, sizeof(buf));
    assert_int_equal(strlen(buf), 20);
}

static void test_format_offset(void **state)
{
    char buf[TY_TIME_FRAC_LEN];

    (void)state;
    ty_time_format_offset(T0, 0, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T23:38:50Z");
    ty_time_format_offset(T0, 5 * 3600 + 1800, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-22T05:08:50+05:30");
    ty_time_format_offset(T0, -8 * 3600, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-21T15:38:50-08:00");
    ty_time_format_offset(T0, -8 * 3600, buf, 25);
    assert_string_equal(buf, "");
}

static time_t parsed(const char *s)
{
    time_t t = 42;
    if (ty_time_parse(s, &t) != 0)
        fail_msg("\"%s\" did not parse", s);
    return t;
}

static void refused(const char *s)
{
    time_t t = 42;
    struct timespec ts = {42, 42};
    if (ty_time_parse(s, &t) == 0)
        fail_msg("\"%s\" parsed", s);
    assert_int_equal(t, 42); /* untouched */
    assert_int_equal(ty_time_parse_ts(s, &ts), -1);
    assert_int_equal(ts.tv_sec, 42);
}

static void test_parse(void **state)
{
    struct timespec ts;

    (void)state;
    assert_int_equal(parsed("2026-11-21T23:38:50Z"), T0);
    assert_int_equal(parsed("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(parsed("1969-12-31T23:59:59Z"), -1);
    /* offsets: the same instant */
    assert_int_equal(parsed("2026-11-22T05:08:50+05:30"), T0);
    assert_int_equal(parsed("2026-11-21T15:38:50-08:00"), T0);
    assert_int_equal(parsed("2026-11-21T23:38:50+00:00"), T0);
    assert_int_equal(parsed("2026-11-21T23:38:50-00:00"), T0);
    /* fractions: any length, the first 9 digits kept */
    assert_int_equal(parsed("2026-11-21T23:38:50.5Z"), T0);
    assert_int_equal(ty_time_parse_ts("2026-11-21T23:38:50.5Z", &ts), 0);
    assert_int_equal(ts.tv_sec, T0);
    assert_int_equal(ts.tv_nsec, 500000000);
    assert_int_equal(ty_time_parse_ts("2026-11-21T23:38:50.000123Z", &ts), 0);
    assert_int_equal(ts.tv_nsec, 123000);
    assert_int_equal(ty_time_parse_ts("2026-11-21T23:38:50.123456789123Z", &ts), 0);
    assert_int_equal(ts.tv_nsec, 123456789);
    assert_int_equal(ty_time_parse_ts("2026-11-22T05:08:50.25+05:30", &ts), 0);
    assert_int_equal(ts.tv_sec, T0);
    assert_int_equal(ts.tv_nsec, 250000000);
    assert_int_equal(ty_time_parse_ts("2026-11-21T23:38:50Z", &ts), 0);
    assert_int_equal(ts.tv_nsec, 0);
    /* calendar edges */
    assert_int_equal(parsed("2024-02-29T00:00:00Z"), parsed("2024-03-01T00:00:00Z") - 86400);
    assert_int_equal(parsed("2000-02-29T12:00:00Z"), 951825600);
    assert_int_equal(parsed("2026-12-31T23:59:59Z") + 1, parsed("2027-01-01T00:00:00Z"));
    assert_int_equal(parsed("0001-01-01T00:00:00Z"), -62135596800LL); /* Go's zero time */
    assert_int_equal(parsed("9999-12-31T23:59:59Z"), 253402300799LL);
}

static void test_parse_refuses(void **state)
{
    (void)state;
    refused("");
    refused("2026-11-21");
    refused("2026-11-21T23:38:50");      /* no zone */
    refused("2026-11-21t23:38:50Z");     /* lower case: Go refuses them */
    refused("2026-11-21T23:38:50z");
    refused("2026-11-21 23:38:50Z");     /* a space is not RFC 3339 */
    refused("2026-11-21T23:38Z");        /* no seconds */
    refused("2026-11-21T23:38:50.Z");    /* an empty fraction */
    refused("2026-11-21T23:38:50,5Z");   /* a comma */
    refused("2026-11-21T23:38:50ZZ");    /* trailing text */
    refused("2026-11-21T23:38:50Z ");
    refused(" 2026-11-21T23:38:50Z");
    refused("2026-11-21T23:38:50+0530"); /* offsets need their colon */
    refused("2026-11-21T23:38:50+05");
    refused("2026-11-21T23:38:50+24:00");
    refused("2026-11-21T23:38:50+05:60");
    refused("2026-13-01T00:00:00Z");
    refused("2026-00-01T00:00:00Z");
    refused("2026-11-00T00:00:00Z");
    refused("2026-11-31T00:00:00Z");     /* November has 30 */
    refused("2026-02-29T00:00:00Z");     /* not a leap year */
    refused("1900-02-29T00:00:00Z");     /* nor is 1900 */
    refused("2026-11-21T24:00:00Z");
    refused("2026-11-21T23:60:00Z");
    refused("2026-11-21T23:38:60Z");     /* Go refuses leap seconds */
    refused("26-11-21T23:38:50Z");
    refused("2026-1-21T23:38:50Z");
    refused("2026-11-21T3:38:50Z");
    refused("+2026-11-21T23:38:50Z");
    refused("2026-11-21T23:38:5aZ");
    assert_int_equal(ty_time_parse(NULL, &(time_t){0}), -1);
}

static void test_parse_flags(void **state)
{
    struct timespec ts;

    (void)state;
    assert_int_equal(ty_time_parse_flags("2026-11-21 23:38:50", TY_TIME_SPACE | TY_TIME_NOZONE,
                                         &ts),
                     0);
    assert_int_equal(ts.tv_sec, T0);
    assert_int_equal(ty_time_parse_flags("2026-11-21T23:38:50", TY_TIME_NOZONE, &ts), 0);
    assert_int_equal(ts.tv_sec, T0);
    assert_int_equal(ty_time_parse_flags("2026-11-21 23:38:50Z", TY_TIME_SPACE, &ts), 0);
    assert_int_equal(ty_time_parse_flags("2026-11-21 23:38:50", TY_TIME_SPACE, &ts), -1);
    assert_int_equal(ty_time_parse_flags("2026-11-21 23:38:50", TY_TIME_NOZONE, &ts), -1);
    assert_int_equal(ty_time_parse_flags("2026-11-21  23:38:50", TY_TIME_SPACE | TY_TIME_NOZONE,
                                         &ts),
                     -1);
}

/* What one writes the other reads back, across a few centuries and every
 * precision. */
static void test_round_trip(void **state)
{
    char buf[TY_TIME_FRAC_LEN];
    struct timespec in, out;

    (void)state;
    for (int64_t t = -5000000000LL; t < 10000000000LL; t += 987654321) {
        for (int digits = 0; digits <= 9; digits += 3) {
            in = (struct timespec){(time_t)t, (long)(t % 1000000000 + 1000000000) % 1000000000};
            ty_time_format_frac(in, digits, buf, sizeof(buf));
            assert_int_equal(ty_time_parse_ts(buf, &out), 0);
            assert_int_equal(out.tv_sec, in.tv_sec);
            long want = in.tv_nsec;
            for (int i = digits; i < 9; i++)
                want /= 10;
            for (int i = digits; i < 9; i++)
                want *= 10;
            assert_int_equal(out.tv_nsec, want);
        }
        ty_time_format_offset((time_t)t, -(3 * 3600 + 1800), buf, sizeof(buf));
        assert_int_equal(parsed(buf), t);
    }
    assert_int_equal(ty_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(ty_days_from_civil(1969, 12, 31), -1);
    assert_int_equal(ty_days_from_civil(2000, 3, 1), 11017);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_frac),
        cmocka_unit_test(test_format_offset),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refuses),
        cmocka_unit_test(test_parse_flags),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
