#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/quantity.h"

static int64_t parse_ok(const char *s)
{
    ty_error err;
    int64_t v = -12345;

    ty_error_init(&err);
    int rc = quantity_parse(s, &v, &err);
    if (rc != 0)
        print_error("quantity_parse(\"%s\") failed: %s\n", s, err.text);
    assert_int_equal(rc, 0);
    assert_int_equal(err.code, TY_OK);
    return v;
}

static void parse_bad(const char *s)
{
    ty_error err;
    int64_t v = 777;

    ty_error_init(&err);
    assert_int_equal(quantity_parse(s, &v, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_true(strlen(err.text) > 0);
    /* No side effects on failure. */
    assert_int_equal(v, 777);
}

static void test_plain_and_decimal_si(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("0"), 0);
    assert_int_equal(parse_ok("1"), 1000);
    assert_int_equal(parse_ok("500m"), 500);
    assert_int_equal(parse_ok("1.5"), 1500);
    assert_int_equal(parse_ok("2k"), 2000000);
    assert_int_equal(parse_ok("1M"), INT64_C(1000000000));
    assert_int_equal(parse_ok("3G"), INT64_C(3000000000000));
    assert_int_equal(parse_ok("1T"), INT64_C(1000000000000000));
    assert_int_equal(parse_ok("1P"), INT64_C(1000000000000000000));
}

static void test_exa_overflows_in_milli(void **state)
{
    (void)state;
    /* 2E units is 2e21 milli-units: past int64. 9E would be as well. */
    parse_bad("2E");
    parse_bad("9E");
    assert_int_equal(parse_ok("0.001E"), INT64_C(1000000000000000000));
}

static void test_binary_si(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("1Ki"), 1024000);
    assert_int_equal(parse_ok("2Mi"), INT64_C(2) * 1024 * 1024 * 1000);
    assert_int_equal(parse_ok("1Gi"), INT64_C(1073741824000));
    assert_int_equal(parse_ok("1.5Gi"), INT64_C(1610612736000));
    assert_int_equal(parse_ok("1Ti"), INT64_C(1099511627776000));
    assert_int_equal(parse_ok("1Pi"), INT64_C(1125899906842624000));
    /* 1Ei = 2^60 units = 1.15e21 milli: past int64. */
    parse_bad("1Ei");
    assert_int_equal(parse_ok("0.5Ki"), 512000);
}

static void test_exponents(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("1e3"), 1000000);
    assert_int_equal(parse_ok("1E3"), 1000000);
    assert_int_equal(parse_ok("1e+3"), 1000000);
    assert_int_equal(parse_ok("15e-1"), 1500);
    assert_int_equal(parse_ok("1E-2"), 10);
    assert_int_equal(parse_ok("2.5e2"), 250000);
    assert_int_equal(parse_ok("1e0"), 1000);
}

static void test_signs_and_forms(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("+1"), 1000);
    assert_int_equal(parse_ok("-1"), -1000);
    assert_int_equal(parse_ok("-500m"), -500);
    assert_int_equal(parse_ok(".5"), 500);
    assert_int_equal(parse_ok("5."), 5000);
    assert_int_equal(parse_ok("0.1"), 100);
    assert_int_equal(parse_ok("000123"), 123000);
    assert_int_equal(parse_ok("-0"), 0);
    assert_int_equal(parse_ok("100n"), 1);
    assert_int_equal(parse_ok("1000000u"), 1000);
}

static void test_rounds_up_below_milli(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("0.1m"), 1);
    assert_int_equal(parse_ok("1n"), 1);
    assert_int_equal(parse_ok("1u"), 1);
    assert_int_equal(parse_ok("1001u"), 2);
    assert_int_equal(parse_ok("1.0001"), 1001);
    assert_int_equal(parse_ok("1e-30"), 1);
    assert_int_equal(parse_ok("0.0000000000000000000000000000000000000001"), 1);
    /* Exact values are not rounded. */
    assert_int_equal(parse_ok("1000u"), 1);
    assert_int_equal(parse_ok("1.000"), 1000);
    /* The magnitude is rounded up, as Kubernetes does. */
    assert_int_equal(parse_ok("-0.1m"), -1);
    /* Zero with a tiny unit stays zero. */
    assert_int_equal(parse_ok("0n"), 0);
}

static void test_limits(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("9223372036854775807m"), INT64_MAX);
    assert_int_equal(parse_ok("-9223372036854775807m"), -INT64_MAX);
    parse_bad("9223372036854775808m");
    parse_bad("9223372036854776");
    parse_bad("1e100");
    parse_bad("1e99999999999999999999");
    assert_int_equal(parse_ok("1e-99999999999999999999"), 1);
    assert_int_equal(parse_ok("0e99999"), 0);
    /* 8Pi fits (9.0e18), 9Pi does not. */
    assert_int_equal(parse_ok("8Pi"), INT64_C(9007199254740992000));
    parse_bad("9Pi");
}

static void test_bad_input(void **state)
{
    (void)state;
    const char *bad[] = {
        "",     "1.2.3", "10Xi", "abc",  "1 ",  " 1",  "1K",  "1ki", "1KI", "1e",
        "1e+",  "1e1.5", ".",    "+",    "-",   "--1", "1Mi2", "1mm", "1.5.Gi", "Gi",
        "1i",   "e3",    "1 Gi", "0x10", "1,5", "1e3Gi", "1Ki1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        parse_bad(bad[i]);
}

static void test_bad_input_messages(void **state)
{
    ty_error err;
    int64_t v;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(quantity_parse("abc", &v, &err), -1);
    assert_non_null(strstr(err.text, "quantities must match the regular expression"));
    ty_error_init(&err);
    assert_int_equal(quantity_parse("10Xi", &v, &err), -1);
    assert_non_null(strstr(err.text, "suffix"));
    /* A NULL error is allowed. */
    assert_int_equal(quantity_parse("bogus", &v, NULL), -1);
    assert_int_equal(quantity_parse(NULL, &v, NULL), -1);
}

static void test_too_many_digits(void **state)
{
    char buf[5000];
    (void)state;

    memset(buf, '1', sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    parse_bad(buf);
    /* Many leading zeros are harmless until the text cap. */
    memset(buf, '0', 200);
    strcpy(buf + 200, "5");
    assert_int_equal(parse_ok(buf), 5000);
}

static void test_format(void **state)
{
    char buf[32];
    (void)state;

    quantity_format(500, buf, sizeof(buf));
    assert_string_equal(buf, "500m");
    quantity_format(2000, buf, sizeof(buf));
    assert_string_equal(buf, "2");
    quantity_format(1500, buf, sizeof(buf));
    assert_string_equal(buf, "1500m");
    quantity_format(0, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    quantity_format(-250, buf, sizeof(buf));
    assert_string_equal(buf, "-250m");
    quantity_format(-3000, buf, sizeof(buf));
    assert_string_equal(buf, "-3");
    /* Binary multiples stay plain numbers. */
    quantity_format(INT64_C(1073741824000), buf, sizeof(buf));
    assert_string_equal(buf, "1073741824");
    /* Truncates safely. */
    quantity_format(123456, buf, 4);
    assert_string_equal(buf, "123");
    quantity_format(INT64_MAX, buf, sizeof(buf));
    assert_string_equal(buf, "9223372036854775807m");
}

static void test_format_parse_roundtrip(void **state)
{
    const int64_t values[] = {0, 1, 999, 1000, 1001, 123456789, -5, -5000, INT64_MAX};
    char buf[32];
    (void)state;

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        quantity_format(values[i], buf, sizeof(buf));
        assert_int_equal(parse_ok(buf), values[i]);
    }
}

static void test_value(void **state)
{
    (void)state;
    assert_int_equal(quantity_value(0), 0);
    assert_int_equal(quantity_value(1000), 1);
    assert_int_equal(quantity_value(1), 1);
    assert_int_equal(quantity_value(1500), 2);
    assert_int_equal(quantity_value(2000), 2);
    assert_int_equal(quantity_value(-1500), -2);
    assert_int_equal(quantity_value(-2000), -2);
    assert_int_equal(quantity_value(parse_ok("1Gi")), INT64_C(1073741824));
    assert_int_equal(quantity_value(parse_ok("100m")), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_decimal_si),
        cmocka_unit_test(test_exa_overflows_in_milli),
        cmocka_unit_test(test_binary_si),
        cmocka_unit_test(test_exponents),
        cmocka_unit_test(test_signs_and_forms),
        cmocka_unit_test(test_rounds_up_below_milli),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_bad_input_messages),
        cmocka_unit_test(test_too_many_digits),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_parse_roundtrip),
        cmocka_unit_test(test_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
