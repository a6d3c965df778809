/* test_patch_diff.c - the RFC 6902 diff (model/patch.h: patch_json_diff):
 * applied with patch_json it turns the first value into the second, with
 * as few operations as its rules give, keys escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/patch.h"

/* JSON written with single quotes for readability. */
static json_t *J(const char *text)
{
    char *s = strdup(text);
    json_error_t jerr;
    json_t *v;

    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    v = json_loads(s, JSON_DECODE_ANY, &jerr);
    if (!v)
        print_error("bad test JSON (%s): %s\n", jerr.text, s);
    free(s);
    assert_non_null(v);
    return v;
}

static const char *str_at(const json_t *ops, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(ops, i), key));
}

static void check_diff(const char *a_text, const char *b_text, int want_ops)
{
    json_t *a = J(a_text), *b = J(b_text), *ops = patch_json_diff(a, b), *c;
    ty_error err;

    assert_non_null(ops);
    ty_error_init(&err);
    c = patch_json(a, ops, &err);
    if (!c || !json_equal(c, b)) {
        char *t = json_dumps(ops, 0);
        fail_msg("diff %s does not turn %s into %s: %s", t, a_text, b_text, err.text);
    }
    if (want_ops >= 0)
        assert_int_equal(json_array_size(ops), want_ops);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(ops);
}

static void test_json_diff(void **state)
{
    json_t *a, *empty = json_object(), *ops;

    (void)state;
    check_diff("{'a': 1}", "{'a': 1}", 0);
    check_diff("{'a': 1, 'b': {'c': 2}}", "{'a': 2, 'b': {'c': 2, 'd': 3}}", 2);
    check_diff("{'a': 1, 'x': 2}", "{'y': 2}", 3);
    check_diff("{'a/b': 1, 'c~d': {'e': 1}}", "{'a/b': 2, 'c~d': {'e': 2}}", 2);
    check_diff("{'l': [1, 2, 3]}", "{'l': [1, 5, 3]}", 1);
    check_diff("{'l': [1, 2, 3]}", "{'l': [1, 2]}", 1);
    check_diff("{'l': [{'a': 1}, {'b': 1}]}", "{'l': [{'a': 1}, {'b': 1, 'c': 2}]}", 1);
    check_diff("{'l': {'x': 1}}", "{'l': [1]}", 1);
    check_diff("[1]", "{'a': 1}", 1);
    check_diff("{'n': null}", "{'n': 0}", 1);

    /* escaping, exactly */
    a = J("{'a/b': 1, 'c~d': 1}");
    ops = patch_json_diff(a, empty);
    assert_string_equal(str_at(ops, 0, "path"), "/a~1b");
    assert_string_equal(str_at(ops, 1, "path"), "/c~0d");
    assert_string_equal(str_at(ops, 0, "op"), "remove");
    json_decref(ops);
    json_decref(a);
    json_decref(empty);
}

/* A key with a NUL byte (a tree from the YAML or protobuf decoder; JSON
 * text cannot carry one past jansson): its object is replaced whole, the
 * key kept in the value. */
static void test_nul_key(void **state)
{
    json_t *a = json_pack("{s:{s:i}}", "o", "k", 1), *b = json_deep_copy(a), *ops, *v;

    (void)state;
    json_object_setn_new(json_object_get(b, "o"), "x\0y", 3, json_integer(2));
    ops = patch_json_diff(a, b);
    assert_int_equal(json_array_size(ops), 1);
    assert_string_equal(str_at(ops, 0, "op"), "replace");
    assert_string_equal(str_at(ops, 0, "path"), "/o");
    v = json_object_get(json_array_get(ops, 0), "value");
    assert_int_equal(json_integer_value(json_object_getn(v, "x\0y", 3)), 2);
    assert_int_equal(json_integer_value(json_object_get(v, "k")), 1);
    json_decref(ops);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_diff),
        cmocka_unit_test(test_nul_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
